#!/usr/bin/env python3
"""Fails when a library or CLI source reads a CORUN_* variable anywhere but in corun::Config.

Every CORUN_* setting is parsed once, strictly, by Config::from_env (engine/config.cpp); the layers below
take plain options structs and the CLI takes the Config (docs/env-vars.md). A new env::get("CORUN_...") or
getenv("CORUN_...") elsewhere would bring back settings that bypass the Config.

    python3 check_env_reads.py ROOT        check the tree at ROOT; exit 1 and list every read elsewhere
    python3 check_env_reads.py --self-test check that a planted read is caught (and a clean tree passes)
"""
import re
import sys

import tree_check

FOLDERS = ["base", "codelets", "sched", "numa", "trace", "graphs", "engine", "serve", "cli", "include/corun"]
CONFIG = "engine/config.cpp"
# Reads that stay where they are, with the reason.
# (file, variable) pairs allowed outside Config. CORUN_USER_OPENBLAS_NUM_THREADS is no setting: corun's main
# hands the user's OPENBLAS_NUM_THREADS to its own re-executed process in it, before any library (and the
# Config) exists (cli/blas_pool.cpp), and takes it back out at once.
EXCEPTIONS = {("cli/blas_pool.cpp", "CORUN_USER_OPENBLAS_NUM_THREADS")}
READ = re.compile(r'\b(?:env::get\w*|(?:std::)?getenv|secure_getenv)\s*\(\s*"(CORUN_[A-Z0-9_]*)"')


def reads_outside_config(root):
    found = []
    for rel, text in tree_check.source_files(root, FOLDERS):
        if rel == CONFIG:
            continue
        for lineno, line in enumerate(text.split("\n"), 1):
            for var in READ.findall(line):
                if (rel, var) not in EXCEPTIONS:
                    found.append(f"{rel}:{lineno}: reads {var}; read it in Config::from_env "
                                 f"({CONFIG}) and pass the value down")
    return found


def self_test():
    return tree_check.self_test(
        reads_outside_config,
        clean={CONFIG: 'if (auto v = env::get("CORUN_SCHED")) c.policy = *v;\n',
               "numa/ok.cpp": '// CORUN_NUMA is read by the Config\nthrow Error("set CORUN_NUMA=off");\n'},
        planted={"numa/bad.cpp": 'const auto m = env::get_choice("CORUN_NUMA", {"off"});\n',
                 "cli/bad.cpp": 'const char* s = std::getenv( "CORUN_SCHED");\n',
                 "engine/bad.cpp": 'if (auto r = env::get_int("CORUN_REPLICAS", 1, 8)) {}\n'})


if __name__ == "__main__":
    sys.exit(tree_check.main(sys.argv, __doc__, reads_outside_config, self_test,
                             failed=lambda n: f"{n} CORUN_* read(s) outside {CONFIG}",
                             passed=f"env reads: every CORUN_* variable is read in {CONFIG}"))
