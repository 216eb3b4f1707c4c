#!/usr/bin/env python3
"""Fails when docs/env-vars.md and the code that reads CORUN_* variables disagree.

docs/env-vars.md has two tables of corun's variables: "## corun" (the settings corun::Config::from_env reads
in engine/config.cpp) and "## Scripts and tests" (variables of scripts/, tests/ and bench/). The check:
  - every CORUN_* variable engine/config.cpp reads is a row of the "corun" table, and every row of that table
    is read there (a documented setting nobody reads, or a read nobody documented, both fail);
  - every CORUN_* variable the scripts, tests and benchmarks read (getenv, ${VAR}, $VAR) is a row of one of
    the two tables, and every row of "Scripts and tests" is read by one of them.

    python3 check_env_docs.py ROOT         check the tree at ROOT; exit 1 and list every disagreement
    python3 check_env_docs.py --self-test  check that planted disagreements are caught (and a clean tree passes)
"""
import os
import re
import sys

import tree_check

CONFIG = "engine/config.cpp"
DOC = "docs/env-vars.md"
ENGINE_SECTION = "## corun"
SCRIPT_SECTION = "## Scripts and tests"
SCRIPT_FOLDERS = ["scripts", "tests", "bench"]
# Names that look like settings but are not, with the reason.
NOT_SETTINGS = {"CORUN_TEST_ENV_VAR"}  # tests/unit/test_env.cpp sets and reads it to test the env parser
CPP_READ = re.compile(r'\b(?:env::get\w*|(?:std::)?getenv|secure_getenv)\s*\(\s*"(CORUN_[A-Z0-9_]*)"')
SHELL_READ = re.compile(r'\$\{?(CORUN_[A-Z0-9_]+)')
# In CMake files ${VAR} is a CMake variable (tests/mpi's CORUN_MPIRUN, a find_program result); the
# environment is $ENV{VAR}.
CMAKE_ENV_READ = re.compile(r'\$ENV\{(CORUN_[A-Z0-9_]+)\}')
ROW = re.compile(r'^\|\s*`(CORUN_[A-Z0-9_]+)`\s*\|')


def read_text(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def documented(root):
    """{section heading: set of variables with a row in that section's tables}."""
    sections, current = {}, None
    for line in read_text(root, DOC).splitlines():
        if line.startswith("## "):
            current = line.strip()
            sections.setdefault(current, set())
        elif current and ROW.match(line):
            sections[current].add(ROW.match(line).group(1))
    return sections


def script_reads(root):
    """{variable: first file that reads it} over the scripts, tests and benchmarks."""
    found = {}
    for folder in SCRIPT_FOLDERS:
        for dirpath, _, names in sorted(os.walk(os.path.join(root, folder))):
            for name in sorted(names):
                if not name.endswith((".sh", ".py", ".cpp", ".hpp", ".sbatch", ".cmake", ".txt")):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), root)
                text = read_text(root, rel)
                cmake = name == "CMakeLists.txt" or name.endswith(".cmake")
                reads = CMAKE_ENV_READ.findall(text) if cmake else CPP_READ.findall(text) + SHELL_READ.findall(text)
                for var in reads:
                    if var not in NOT_SETTINGS:
                        found.setdefault(var, rel)
    return found


def disagreements(root):
    if not os.path.exists(os.path.join(root, DOC)) or not os.path.exists(os.path.join(root, CONFIG)):
        return [f"{DOC} or {CONFIG} is missing"]
    docs = documented(root)
    engine_doc = docs.get(ENGINE_SECTION, set())
    script_doc = docs.get(SCRIPT_SECTION, set())
    config = set(CPP_READ.findall(read_text(root, CONFIG)))
    scripts = script_reads(root)
    found = []
    for var in sorted(config - engine_doc):
        found.append(f"{CONFIG} reads {var}, but {DOC} has no row for it under '{ENGINE_SECTION}'")
    for var in sorted(engine_doc - config):
        found.append(f"{DOC} documents {var} under '{ENGINE_SECTION}', but {CONFIG} does not read it "
                     f"(move it to '{SCRIPT_SECTION}' if a script or test reads it, or remove the row)")
    for var in sorted(set(scripts) - engine_doc - script_doc):
        found.append(f"{scripts[var]} reads {var}, but {DOC} documents it nowhere (add a row under "
                     f"'{SCRIPT_SECTION}')")
    for var in sorted(script_doc - set(scripts)):
        found.append(f"{DOC} documents {var} under '{SCRIPT_SECTION}', but no file of "
                     f"{', '.join(SCRIPT_FOLDERS)} reads it")
    return found


def self_test():
    doc = ("# Environment variables\n\n## corun\n\n| Variable | Values |\n|---|---|\n| `CORUN_SCHED` | a name |\n"
           "\n## Scripts and tests\n\n| Variable | Values |\n|---|---|\n| `CORUN_CACHE` | a directory |\n")
    return tree_check.self_test(
        disagreements,
        clean={DOC: doc,
               CONFIG: 'if (auto v = env::get("CORUN_SCHED")) c.policy = *v;\n',
               "scripts/build.sh": 'cache=${CORUN_CACHE:-$HOME/.cache/corun}\nCORUN_SCHED=lws corun train\n',
               "tests/unit/test_env.cpp": 'setenv("CORUN_TEST_ENV_VAR", "1", 1); getenv("CORUN_TEST_ENV_VAR");\n'},
        planted={CONFIG: 'if (auto v = env::get("CORUN_SCHED")) c.policy = *v;\n'
                         'if (auto q = env::get_bool("CORUN_QUIET")) c.quiet = *q;\n',  # read, undocumented
                 "tests/engine/test_x.cpp": 'if (std::getenv("CORUN_TEST_VERBOSE")) {}\n',  # read, undocumented
                 DOC: doc + "| `CORUN_STARPU` | auto |\n"})  # documented, read by no script or test


if __name__ == "__main__":
    sys.exit(tree_check.main(sys.argv, __doc__, disagreements, self_test,
                             failed=lambda n: f"{n} disagreement(s) between {DOC} and the code",
                             passed=f"env docs: {DOC} lists exactly the CORUN_* variables {CONFIG}, the scripts "
                                    f"and the tests read"))
