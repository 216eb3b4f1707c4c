#!/usr/bin/env bash
# The installed package end to end (CTest label `install`; docs/install.md):
#   1. `cmake --install BUILD --prefix TMP` installs headers, libraries, the CLI, the CMake package, corun.pc;
#   2. the installed `corun` runs (its RPATH finds the StarPU it was built with);
#   3. every examples/NN_* project configures with find_package(corun), builds and runs against it, with
#      PKG_CONFIG_PATH unset (the package remembers where StarPU is), and the training examples' loss falls;
#   4. example 01 also builds with plain `c++ $(pkg-config --cflags --libs corun)`;
#   5. the prefix is relocatable (moved, example 01 builds and runs again);
#   6. a package whose StarPU is gone, or that finds another StarPU, stops configure with a clear message;
#   7. find_package(corun COMPONENTS onnx) gives corun::corun_onnx: a program calls corun::import_onnx.
# usage: test_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=${1:?usage: test_install.sh BUILD_DIR SOURCE_DIR}
src=${2:?usage: test_install.sh BUILD_DIR SOURCE_DIR}
tmp=$(mktemp -d /tmp/corun_install_XXXXXX)
# A private StarPU home for the installed corun and the examples: parallel ctest never shares ~/.starpu
# (StarPU prefers XDG_CACHE_HOME to STARPU_HOME, hence the unset).
export STARPU_HOME="$tmp/starpu-home"
unset XDG_CACHE_HOME
mkdir -p "$tmp/ex"
step() { echo "== $*"; }
fail() { echo "FAIL: $*" >&2; echo "(files kept in $tmp)" >&2; exit 1; }
# Logs are kept only on failure.
run_logged() {  # run_logged LOG CMD...
  local log=$1; shift
  "$@" >"$log" 2>&1 || { cat "$log" >&2; fail "command failed: $*"; }
}

prefix=$tmp/prefix
step "cmake --install $build --prefix $prefix"
run_logged "$tmp/install.log" cmake --install "$build" --prefix "$prefix"

config=$(find "$prefix" -name corunConfig.cmake -print -quit)
pcfile=$(find "$prefix" -name corun.pc -print -quit)
[[ -n "$config" ]] || fail "no corunConfig.cmake under $prefix"
[[ -n "$pcfile" ]] || fail "no corun.pc under $prefix"
libdir=$(dirname "$(dirname "$pcfile")")
for f in bin/corun include/corun/engine.hpp include/corun/graph.hpp include/corun/tensor.hpp include/corun/error.hpp \
         include/corun/npy.hpp include/corun/onnx.hpp include/corun/machine.hpp include/corun/trace.hpp include/corun/models/lstm.hpp; do
  [[ -e "$prefix/$f" ]] || fail "$f was not installed"
done
for lib in corun corun_graphs corun_codelets corun_sched corun_trace corun_kernels corun_base corun_onnx; do
  [[ -f "$libdir/lib$lib.a" ]] || fail "lib$lib.a was not installed in $libdir"
done
for f in corunConfigVersion.cmake corunTargets.cmake corunOnnxTargets.cmake; do
  [[ -f "$(dirname "$config")/$f" ]] || fail "$f was not installed"
done
# Only the public headers: nothing from core/, sched/, codelets/ or graphs/.
extra=$(find "$prefix/include" -type f ! -path "$prefix/include/corun/*" | head -n 5)
[[ -z "$extra" ]] || fail "files outside include/corun/ were installed: $extra"
# Every installed header compiles on its own as C++17 (what the package promises its users).
for h in $(cd "$prefix/include" && find corun -name '*.hpp' | sort); do
  echo "#include <$h>" | c++ -std=c++17 -fsyntax-only -Wall -Wextra -Werror -I"$prefix/include" -x c++ - \
    || fail "installed header $h does not compile alone as C++17"
done

step "installed corun runs"
env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH "$prefix/bin/corun" --help >"$tmp/help.txt" 2>&1 \
  || { cat "$tmp/help.txt" >&2; fail "installed corun --help failed"; }
grep -q "usage: corun <command>" "$tmp/help.txt" || fail "installed corun --help printed no usage"
env -u PKG_CONFIG_PATH -u LD_LIBRARY_PATH "$prefix/bin/corun" info >"$tmp/info.txt" 2>&1 \
  || { cat "$tmp/info.txt" >&2; fail "installed corun info failed"; }
grep -q "^workers" "$tmp/info.txt" || fail "installed corun info printed no workers line"
# The same StarPU as the build tree's corun (version and caps), found without PKG_CONFIG_PATH/LD_LIBRARY_PATH.
want=$(env -u LD_LIBRARY_PATH "$build/cli/corun" info 2>/dev/null | grep "^starpu ") || fail "$build/cli/corun info failed"
got=$(grep "^starpu " "$tmp/info.txt")
[[ "$got" == "$want" ]] || fail "installed corun runs another StarPU: '$got', the build tree's: '$want'"
echo "   $got"
# libstarpu as the build tree's corun resolves it.
starpu_so() { ldd "$1" | awk '/libstarpu-1.3/ {print $3}'; }
want_so=$(env -u LD_LIBRARY_PATH bash -c "$(declare -f starpu_so); starpu_so '$build/cli/corun'")
[[ -n "$want_so" ]] || fail "cannot tell which libstarpu $build/cli/corun uses"

# Parses "first loss A final loss B" and checks B < A.
loss_fell() {
  local out=$1 name=$2
  local line first final
  line=$(grep -E "^first loss [0-9.]+ final loss [0-9.]+$" "$out") || fail "$name printed no 'first loss .. final loss ..' line"
  first=$(awk '{print $3}' <<<"$line")
  final=$(awk '{print $6}' <<<"$line")
  awk -v a="$first" -v b="$final" 'BEGIN { exit !(b < a) }' || fail "$name: the loss did not fall ($first -> $final)"
  echo "   $name: loss $first -> $final"
}

build_example() {  # build_example NAME PREFIX BUILD_DIR
  local ex=$1 pfx=$2 bdir=$3
  run_logged "$bdir.configure.log" env -u PKG_CONFIG_PATH cmake -S "$src/examples/$ex" -B "$bdir" \
    -DCMAKE_PREFIX_PATH="$pfx" -DCMAKE_BUILD_TYPE=Release
  run_logged "$bdir.build.log" cmake --build "$bdir" -j2
}

for dir in "$src"/examples/[0-9][0-9]_*/; do
  ex=$(basename "$dir")
  step "example $ex: find_package(corun), build, run"
  build_example "$ex" "$prefix" "$tmp/ex/$ex"
  out=$tmp/ex/$ex.out
  so=$(env -u LD_LIBRARY_PATH bash -c "$(declare -f starpu_so); starpu_so '$tmp/ex/$ex/example_$ex'")
  [[ "$so" == "$want_so" ]] || fail "example $ex loads '$so', corun was built against '$want_so'"
  CORUN_QUIET=1 "$tmp/ex/$ex/example_$ex" >"$out" 2>&1 || { cat "$out" >&2; fail "example $ex exited non-zero"; }
  grep -qx OK "$out" || { cat "$out" >&2; fail "example $ex did not print OK"; }
  case "$ex" in 01_*) ;; *) loss_fell "$out" "$ex" ;; esac
done
[[ -d "$tmp/ex/01_graph" ]] || fail "examples/01_graph is missing"
[[ -d "$tmp/ex/02_mlp" && -d "$tmp/ex/03_lstm" ]] || fail "examples 02_mlp and 03_lstm are missing"

step "find_package(corun COMPONENTS onnx): corun::import_onnx"
# A file that is not ONNX must come back as corun::Error naming it: the protobuf parser ran, linked through
# corun::corun_onnx (a model that imports is the onnx label's business).
mkdir -p "$tmp/onnx-src"
cat >"$tmp/onnx-src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(corun_onnx_consumer LANGUAGES CXX)
find_package(corun 0.1 REQUIRED COMPONENTS onnx)
add_executable(onnx_consumer main.cpp)
target_link_libraries(onnx_consumer PRIVATE corun::corun_onnx corun::corun)
CM
cat >"$tmp/onnx-src/main.cpp" <<'CPP'
#include <corun/error.hpp>
#include <corun/onnx.hpp>
#include <cstdio>
#include <string>
int main(int argc, char** argv) {
  try {
    corun::import_onnx(argv[argc - 1]);
  } catch (const corun::Error& e) {
    const bool named = std::string(e.what()).find("not a valid ONNX") != std::string::npos;
    std::puts(named ? "OK" : e.what());
    return named ? 0 : 1;
  }
  std::puts("imported a file that is not ONNX");
  return 1;
}
CPP
echo "not a model" >"$tmp/onnx-src/bad.onnx"
run_logged "$tmp/onnx.configure.log" env -u PKG_CONFIG_PATH cmake -S "$tmp/onnx-src" -B "$tmp/onnx-build" \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
run_logged "$tmp/onnx.build.log" cmake --build "$tmp/onnx-build" -j2
"$tmp/onnx-build/onnx_consumer" "$tmp/onnx-src/bad.onnx" >"$tmp/onnx.out" 2>&1 || { cat "$tmp/onnx.out" >&2; fail "the onnx consumer failed"; }
grep -qx OK "$tmp/onnx.out" || fail "the onnx consumer did not print OK"

step "pkg-config: c++ \$(pkg-config --cflags --libs corun) examples/01_graph"
pcdir=$(dirname "$pcfile")
flags=$(env PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs corun) || fail "pkg-config --cflags --libs corun failed"
c++ -std=c++17 -o "$tmp/ex01_pkgconfig" "$src/examples/01_graph/main.cpp" $flags || fail "building with corun.pc failed"
so=$(env -u LD_LIBRARY_PATH bash -c "$(declare -f starpu_so); starpu_so '$tmp/ex01_pkgconfig'")
[[ "$so" == "$want_so" ]] || fail "the pkg-config build of example 01 loads '$so', corun was built against '$want_so'"
CORUN_QUIET=1 "$tmp/ex01_pkgconfig" >"$tmp/ex01_pkgconfig.out" 2>&1 || { cat "$tmp/ex01_pkgconfig.out" >&2; fail "the pkg-config build of example 01 failed"; }
grep -qx OK "$tmp/ex01_pkgconfig.out" || fail "the pkg-config build of example 01 did not print OK"

step "relocated prefix"
mv "$prefix" "$tmp/moved"
build_example 01_graph "$tmp/moved" "$tmp/ex-moved"
CORUN_QUIET=1 "$tmp/ex-moved/example_01_graph" >"$tmp/ex-moved.out" 2>&1 || { cat "$tmp/ex-moved.out" >&2; fail "example 01 against the moved prefix failed"; }
grep -qx OK "$tmp/ex-moved.out" || fail "example 01 against the moved prefix did not print OK"
moved_pc=$(find "$tmp/moved" -name corun.pc -print -quit)
env PKG_CONFIG_PATH="$(dirname "$moved_pc")" pkg-config --cflags corun | grep -q -- "-I$tmp/moved/" \
  || fail "corun.pc does not follow the moved prefix"
mv "$tmp/moved" "$prefix"

# The package's StarPU checks: edit a copy of the config and configure example 01 against it.
broken_config() {  # broken_config DIR SED-EXPRESSION
  rm -rf "$1"
  cp -r "$(dirname "$config")" "$1"
  sed -i "$2" "$1/corunConfig.cmake"
}
expect_configure_error() {  # expect_configure_error CONFIG_DIR MESSAGE
  local log=$tmp/neg.log
  if env -u PKG_CONFIG_PATH cmake -S "$src/examples/01_graph" -B "$tmp/neg-build" -Dcorun_DIR="$1" >"$log" 2>&1; then
    cat "$log" >&2
    fail "configure succeeded with a broken package ($1)"
  fi
  # CMake wraps the message: compare with the lines joined.
  tr '\n' ' ' <"$log" | tr -s ' ' | grep -q "$2" || { cat "$log" >&2; fail "configure failed without saying '$2'"; }
  rm -rf "$tmp/neg-build"
}
step "a package whose StarPU is gone"
broken_config "$tmp/cfg-gone" 's|^set(corun_STARPU_PCFILEDIR ".*")|set(corun_STARPU_PCFILEDIR "/nonexistent/starpu/lib/pkgconfig")|'
expect_configure_error "$tmp/cfg-gone" "no longer exists"
step "a package that finds another StarPU"
broken_config "$tmp/cfg-other" 's|^set(corun_STARPU_PREFIX ".*")|set(corun_STARPU_PREFIX "/opt/another-starpu")|'
expect_configure_error "$tmp/cfg-other" "mixing them is not safe"

rm -rf "$tmp"
echo "== install test passed"
