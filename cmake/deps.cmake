# Third-party dependencies, all through pkg-config so that a StarPU source build is picked up by
# PKG_CONFIG_PATH alone (scripts/setup.sh sets it).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(STARPU REQUIRED IMPORTED_TARGET starpu-1.3)
pkg_check_modules(OPENBLAS REQUIRED IMPORTED_TARGET openblas)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(NUMA REQUIRED IMPORTED_TARGET numa)
# nlohmann-json (header-only): base/json.hpp reads and writes every JSON file with it. 3.11: base/json_errors.cpp
# reads its error messages. Not a dependency of the installed package: no installed header includes it.
find_package(nlohmann_json 3.11 REQUIRED)
# zlib: only the CLI's Fashion-MNIST reader (cli/fashion_mnist.cpp) links it, not the installed libraries.
pkg_check_modules(ZLIB REQUIRED IMPORTED_TARGET zlib)

# Read the worker cap the StarPU we build against was configured with; printed in the summary line.
find_file(CORUN_STARPU_CONFIG_H starpu_config.h PATHS ${STARPU_INCLUDE_DIRS} NO_DEFAULT_PATH)
if(CORUN_STARPU_CONFIG_H)
  file(STRINGS ${CORUN_STARPU_CONFIG_H} _maxcpus REGEX "#define STARPU_MAXCPUS ")
  string(REGEX REPLACE ".*STARPU_MAXCPUS ([0-9]+).*" "\\1" CORUN_STARPU_MAXCPUS "${_maxcpus}")
  # A SimGrid StarPU (scripts/build-starpu.sh simgrid): programs run in simulated time, so only the tests
  # labelled simgrid are built (the others would run kernels that simulation never executes).
  file(STRINGS ${CORUN_STARPU_CONFIG_H} _simgrid REGEX "#define STARPU_SIMGRID 1")
  if(_simgrid)
    set(CORUN_STARPU_SIMGRID ON)
  else()
    set(CORUN_STARPU_SIMGRID OFF)
  endif()
endif()
