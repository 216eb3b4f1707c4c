#!/usr/bin/env python3
"""Fails when a source file includes a folder above its own layer, or beside it.

The layers (docs/architecture.md), bottom to top. A folder may include itself, the public headers
(<corun/...>) and the folders listed for it; anything else is a dependency running the wrong way.

    python3 check_layering.py ROOT        check the tree at ROOT; exit 1 and list every violation
    python3 check_layering.py --self-test check that a planted upward include is caught (and a clean tree passes)
"""
import os
import re
import sys

import tree_check

# folder -> folders it may include (besides itself and include/corun). Keep in step with docs/architecture.md.
ALLOWED = {
    "base": [],
    "codelets": ["base"],
    "sched": ["base"],
    "numa": ["base"],
    "trace": ["base"],
    "graphs": ["codelets", "base"],
    # onnx/ builds Graphs through the public API only (<corun/graph.hpp>, <corun/rnn.hpp> ...), never
    # graphs/graph_impl.hpp or another internal header of graphs/ or codelets/.
    "onnx": ["base"],
    "engine": ["graphs", "codelets", "sched", "numa", "trace", "base"],
    "serve/kernels": ["base"],
    "serve/runtime": ["serve/kernels", "engine", "graphs", "codelets", "sched", "numa", "trace", "base"],
    "serve/http": ["serve/endpoint", "base"],
    "cli": ["onnx", "serve/http", "serve/endpoint", "serve/runtime", "serve/kernels", "engine", "graphs", "codelets", "sched", "numa", "trace", "base"],
}
# The public headers are the API of the whole library: they include only one another.
PUBLIC = "include/corun"
SOURCE_EXTENSIONS = (".hpp", ".h", ".cpp", ".c")
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def folder_of(path):
    """The layer a repository-relative path belongs to (longest match), or None."""
    best = None
    for folder in list(ALLOWED) + [PUBLIC]:
        if path == folder or path.startswith(folder + "/"):
            if best is None or len(folder) > len(best):
                best = folder
    return best


def violations(root):
    found = []
    for layer in list(ALLOWED) + [PUBLIC]:
        top = os.path.join(root, layer)
        for dirpath, _, names in os.walk(top):
            for name in sorted(names):
                if not name.endswith(SOURCE_EXTENSIONS):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if folder_of(rel) != layer:
                    continue  # a sub-folder that is a layer of its own (serve/kernels under serve)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target.startswith("corun/"):
                            continue  # public header
                        if layer == PUBLIC:
                            if "/" in target and folder_of(target) is not None:
                                found.append(f"{rel}:{lineno}: public header includes internal '{target}'")
                            continue
                        dep = folder_of(target)
                        if dep is None or dep == layer or dep in ALLOWED[layer]:
                            continue
                        found.append(f"{rel}:{lineno}: {layer}/ includes '{target}' from {dep}/, "
                                     f"which is not below it (allowed: {', '.join(ALLOWED[layer]) or 'nothing'})")
    return found


def self_test():
    return tree_check.self_test(
        violations,
        clean={"base/a.hpp": '#include "base/b.hpp"\n#include <corun/error.hpp>\n',
               "engine/e.cpp": '#include "graphs/graph.hpp"\n#include "base/a.hpp"\n',
               "onnx/o.cpp": '#include <corun/graph.hpp>\n#include "onnx/convert.hpp"\n#include "base/a.hpp"\n'},
        planted={"base/bad.cpp": '#include "engine/engine.hpp"\n',
                 "codelets/x/bad.cpp": '  #  include "sched/registry.hpp"\n',
                 "serve/kernels/bad.cpp": '#include "serve/runtime/server.hpp"\n',
                 "onnx/ops/bad.cpp": '#include "graphs/graph_impl.hpp"\n'})


if __name__ == "__main__":
    sys.exit(tree_check.main(
        sys.argv, __doc__, violations, self_test,
        failed=lambda n: f"{n} include(s) against the layering; move the code down or the include up "
                         f"(docs/architecture.md)",
        passed="layering: every include points down"))
