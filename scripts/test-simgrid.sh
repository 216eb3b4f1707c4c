#!/usr/bin/env bash
# The simgrid label: tests that need the SimGrid build of StarPU (docs/testing.md, docs/simulation.md).
# Not part of scripts/test.sh: building that StarPU takes ~13 minutes on 2 cores (cached afterwards in
# ${CORUN_CACHE:-~/.cache/corun}).
#
#   scripts/test-simgrid.sh        builds build/simgrid (scripts/setup.sh simgrid) and runs `ctest -L simgrid`
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$("$here/setup.sh" simgrid | tail -n 1)
cd "$build"
ctest -L simgrid --output-on-failure
