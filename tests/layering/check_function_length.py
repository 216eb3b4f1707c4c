#!/usr/bin/env python3
"""Fails when a function of corun's sources is longer than 80 lines.

Long bodies hide their steps: a command reads as parse, set up, loop, report, and an engine step as bind,
reduce, update, account, each a function of its own (DEVELOPERS.md, "functions under 80 lines"). The
check counts the lines of every function body, from the line of its opening brace to the line of its
closing one, in the library and CLI folders (tests, benchmarks and examples are not checked). Lambdas and
nested blocks count towards the function that holds them; functions defined inside a class count alone.

    python3 check_function_length.py ROOT        check the tree at ROOT; exit 1 and list every long function
    python3 check_function_length.py --self-test check that a planted long function is caught
"""
import re
import sys

import tree_check

LIMIT = 80
FOLDERS = ["base", "codelets", "graphs", "onnx", "engine", "sched", "numa", "trace", "serve", "cli", "include"]
SCOPE = re.compile(r'\b(namespace|class|struct|union|enum)\b[^;()]*$')
SIGNATURE_END = re.compile(r'\)\s*(const|override|final|noexcept|mutable|&|&&|\s)*(->\s*[\w:<>,\s*&]+)?\s*$')


def code_only(text):
    """The text with comments, string and character literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(text):
    """(first line, lines) of every function body longer than LIMIT lines."""
    code = code_only(text)
    found = []
    stack = []  # one entry per open brace: "function", "scope" or "block"
    starts = []  # the line of each open brace
    line = 1
    head = ""  # the code since the last brace or semicolon: what an opening brace follows
    for c in code:
        if c == "\n":
            line += 1
            head += " "
        elif c == "{":
            inside_function = "function" in stack
            if SCOPE.search(head) and not inside_function:
                kind = "scope"
            elif not inside_function and (SIGNATURE_END.search(head) or re.search(r'\)\s*:\s*\w', head)):
                kind = "function"
            else:
                kind = "block"
            stack.append(kind)
            starts.append(line)
            head = ""
        elif c == "}":
            if stack:
                kind, first = stack.pop(), starts.pop()
                if kind == "function" and line - first + 1 > LIMIT:
                    found.append((first, line - first + 1))
            head = ""
        elif c == ";":
            head = ""
        else:
            head += c
    return found


def violations(root):
    found = []
    for rel, text in tree_check.source_files(root, FOLDERS):
        for first, lines in long_functions(text):
            found.append(f"{rel}:{first}: a function of {lines} lines (at most {LIMIT}); split it into the steps "
                         f"it takes")
    return found


def self_test():
    body = "".join(f"  x += {i};\n" for i in range(LIMIT - 3))  # with the braces and the return: LIMIT lines
    short = "int f(int x) {\n" + body + "  return x;\n}\n"
    long_one = "int g(int x) {\n" + body + "  x += 1;\n  return x;\n}\n"
    in_class = "struct S {\n  int h(int x) const {\n" + body + body + "    return x;\n  }\n};\n"
    clean = {
        "engine/ok.cpp": ("namespace corun {\n" + short + "struct T {\n  int a = 0;\n};\n"
                          "const char* s = \"{ not a brace\";\n}  // namespace corun\n"),
    }
    planted = {"cli/long.cpp": long_one, "engine/klass.hpp": in_class}
    return tree_check.self_test(violations, clean, planted)


if __name__ == "__main__":
    sys.exit(tree_check.main(sys.argv, __doc__, violations, self_test,
                             lambda n: f"{n} function(s) longer than {LIMIT} lines",
                             f"every function is at most {LIMIT} lines"))
