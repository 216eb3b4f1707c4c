"""What the source-tree checks of this folder share: a self-test on a planted tree, and the command line."""
import os
import tempfile


def self_test(check, clean, planted):
    """check(root) -> list of findings. `clean` files must give none; adding `planted` must give one each.
    Both are {repository-relative path: text}. Returns the exit code."""
    with tempfile.TemporaryDirectory() as root:
        def write(files):
            for rel, text in files.items():
                os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
                with open(os.path.join(root, rel), "w") as f:
                    f.write(text)
        write(clean)
        if check(root):
            print("self-test: a clean tree was reported:", check(root))
            return 1
        write(planted)
        found = check(root)
        if len(found) != len(planted):
            print(f"self-test: expected {len(planted)} findings, got:", found)
            return 1
    print("self-test passed")
    return 0


def main(argv, doc, check, run_self_test, failed, passed):
    """`SCRIPT ROOT` prints every finding of check(ROOT) and `failed(n)`, exit 1, or `passed`, exit 0;
    `SCRIPT --self-test` runs run_self_test()."""
    if argv[1:] == ["--self-test"]:
        return run_self_test()
    if len(argv) != 2:
        print(doc)
        return 2
    found = check(argv[1])
    for line in found:
        print(line)
    if found:
        print(failed(len(found)))
        return 1
    print(passed)
    return 0
