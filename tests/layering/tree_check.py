"""What the source-tree checks of this folder share: a self-test on a planted tree, and the command line."""
import os
import tempfile


SOURCE_EXTENSIONS = (".hpp", ".h", ".cpp", ".c")


def source_files(root, folders):
    """(repository-relative path, text) of every C/C++ source below the `folders` of `root`, in a stable order."""
    for folder in folders:
        for dirpath, _, names in sorted(os.walk(os.path.join(root, folder))):
            for name in sorted(names):
                if name.endswith(SOURCE_EXTENSIONS):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8", errors="replace") as f:
                        yield os.path.relpath(path, root), f.read()


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
