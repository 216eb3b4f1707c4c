#!/usr/bin/env python3
"""Fails when engine/ names a scheduling policy.

The engine learns what it needs about the running policy from the policy's traits and its engine-side
phase (sched/registry.hpp, sched/tuner.hpp), never from its name, so that a new policy is its folder plus
one registry row. A string literal in engine/ that is a policy name, that says CORUN_SCHED=<name> or
STARPU_SCHED=<name>, or that mentions one of the names as a word (corun's own and StarPU's built-ins) is
reported. "corun" is also the project's and the program's name: it is reported only where it is compared
with (== or !=), in CORUN_SCHED=corun, or as "corun policy". Lists of
policies in messages are built from the registry (sched::own_policy_names).

    python3 check_policy_names.py ROOT        check the tree at ROOT; exit 1 and list every finding
    python3 check_policy_names.py --self-test check that planted names are caught (and a clean tree passes)
"""
import os
import re
import sys

import tree_check

# StarPU 1.3's built-in policies (src/core/sched_policy.c's predefined table; `corun info` lists them).
STARPU_BUILTINS = ["eager", "prio", "random", "ws", "lws", "dm", "dmda", "dmdar", "dmdas", "dmdasd", "heft",
                   "pheft", "peager", "pgreedy", "graph_test"]
OWN_ROW = re.compile(r'\{\s*"([A-Za-z0-9_-]+)"\s*,\s*k\w*Description')
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
COMMENT = re.compile(r'//[^\n]*|/\*.*?\*/', re.S)
PROJECT = "corun"  # also a policy name; flagged only as "corun policy"


def own_policies(root):
    with open(os.path.join(root, "sched", "registry.cpp"), encoding="utf-8") as f:
        return OWN_ROW.findall(f.read())


def names_in(literal, names, line):
    """The policy names the string `literal` of source line `line` names (see the module's docstring)."""
    found = []
    for name in names:
        word = re.compile(r'(?<![\w-])' + re.escape(name) + r'(?![\w-])')
        quoted = re.escape('"' + literal + '"')
        compared = re.search(r'[!=]=\s*' + quoted + '|' + quoted + r'\s*[!=]=', line)
        if re.search(r'(CORUN|STARPU)_SCHED=' + re.escape(name) + r'\b', literal):
            found.append(name)
        elif name != PROJECT and word.search(literal):
            found.append(name)
        elif name == PROJECT and (re.search(r'\bcorun policy\b', literal) or (literal == name and compared)):
            found.append(name)
    return found


def strip_comments(text):
    # Keeps string literals intact: a "//" inside one is rare in engine/ and would only hide text after it.
    return COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def violations(root):
    names = sorted(set(own_policies(root)) | set(STARPU_BUILTINS))
    found = []
    for rel, text in tree_check.source_files(root, ["engine"]):
        for lineno, line in enumerate(strip_comments(text).split("\n"), 1):
            for literal in LITERAL.findall(line):
                for policy in names_in(literal, names, line):
                    found.append(f"{rel}:{lineno}: names the policy '{policy}' in \"{literal}\"; ask the "
                                 f"policy's traits (sched/registry.hpp) or build the list from the registry")
    return found


def self_test():
    registry = ('const std::vector<PolicyEntry>& own_policies() {\n  static const std::vector<PolicyEntry> table{\n'
                '      {"cpf", kCpfDescription, cpf_policy},\n      {"corun", kCorunDescription, corun_policy},\n'
                '  };\n}\n')
    clean = {
        "sched/registry.cpp": registry,
        "engine/ok.cpp": ('// the corun policy and lws, in a comment\n'
                          'if (policy.traits.teams == TeamWidths::any) std::fprintf(stderr, "corun: note: %s\\n", s);\n'
                          'const char* a = "corun\'s policies (" ; const char* b = "lwsx";\n'
                          'os << (own ? "corun" : "StarPU built-in");\n'),
    }
    planted = {
        "engine/a.cpp": 'const bool corun = info.policy == "corun";\n',
        "engine/b.cpp": 'fail("pheft keeps one view of the workers");\n',
        "engine/c.cpp": 'fail("choose CORUN_SCHED=cpf");\n',
        "engine/d.hpp": 'fail("the corun policy\'s width search");\n',
        "engine/e.cpp": 'if ("corun" != name) return;\n',
    }
    return tree_check.self_test(violations, clean, planted)


if __name__ == "__main__":
    sys.exit(tree_check.main(sys.argv, __doc__, violations, self_test,
                             lambda n: f"{n} place(s) in engine/ name a scheduling policy",
                             "engine/ names no scheduling policy"))
