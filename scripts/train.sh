#!/usr/bin/env bash
# Installs what is missing, builds, and trains the LSTM (small, 20 iterations unless given) printing the
# results table. Extra arguments go to `corun train` (e.g. --iters 50 --json out.json); flags given twice
# are usage errors, so the defaults are only added when absent.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$("$here/setup.sh" | tail -n 1)
defaults=()
[[ " $* " == *" --model "* ]] || defaults+=(--model lstm)
[[ " $* " == *" --size "* ]] || defaults+=(--size small)
[[ " $* " == *" --iters "* ]] || defaults+=(--iters 20)
exec "$build/cli/corun" train "${defaults[@]}" "$@"
