#!/usr/bin/env bash
# bench/device/bundle.sh BUILD [OUT.tar.xz]: packs what a benchmark needs on a machine without a package
# registry (the lent 16-core machine, bench/device/README.md) into one archive: BUILD's corun (stripped),
# every shared library it loads except glibc's own (the machine's glibc is at least as new: corun needs
# GLIBC_2.34), tcmalloc with its libunwind for the PyTorch runs, and the ONNX skeletons of
# bench/onnx_skeleton.py (folder .dev/onnx, made by the README's first step). Default OUT:
# .dev/bundle.tar.xz (.dev/ is in .git/info/exclude; the device tool's `carry` names it).
#
# The archive unpacks to cli/corun (a wrapper that puts lib/ on LD_LIBRARY_PATH for corun alone, so that
# the machine's own Python never loads our libstdc++), cli/corun.bin, lib/, tclib/, onnx/ and GIT.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
source "$root/bench/lib.sh"
build=${1:?usage: $0 BUILD [OUT.tar.xz]}
out=${2:-$root/.dev/bundle.tar.xz}
corun="$build/cli/corun"
[[ -x "$corun" ]] || { echo "error: $corun not found (build it: CORUN_SETUP_TARGETS=corun_cli scripts/setup.sh source)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/cli" "$stage/lib" "$stage/tclib" "$stage/onnx"
strip -o "$stage/cli/corun.bin" "$corun"
cat >"$stage/cli/corun" <<'SH'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/corun.bin" "$@"
SH
chmod +x "$stage/cli/corun"
# glibc's libraries and the loader stay behind: the machine's own match its kernel.
ldd "$corun" | awk '$3 ~ /^\// { print $3 }' |
  grep -Ev '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | while read -r lib; do
  cp -L "$lib" "$stage/lib/"
done
tc=$(bench_find_lib libtcmalloc.so.4)
if [[ -n "$tc" ]]; then
  cp -L "$tc" "$(bench_find_lib libunwind.so.8)" "$stage/tclib/"
else
  echo "bundle: warning: libtcmalloc.so.4 not found (apt-get install libgoogle-perftools4): PyTorch will run with glibc's malloc only" >&2
fi
cp "$root"/.dev/onnx/*.onnx "$stage/onnx/" 2>/dev/null ||
  echo "bundle: warning: no ONNX skeletons in .dev/onnx (bench/device/README.md, step 1)" >&2
bench_git_sha >"$stage/GIT"
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cJf "$out" .
echo "bundle: $out ($(du -h "$out" | cut -f1); uncompressed $(du -sh "$stage" | cut -f1))" >&2
