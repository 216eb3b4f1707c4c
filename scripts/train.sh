#!/usr/bin/env bash
# The main job: set everything up, then train the 4-layer LSTM (small size, default policy) and print the
# results table. Extra arguments go to `corun train` (e.g. --iters 50 --json out.json).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$("$here/setup.sh" | tail -n 1)
exec "$build/apps/corun" train --model lstm --size small --iters 20 "$@"
