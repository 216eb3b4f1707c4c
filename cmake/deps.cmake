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
# cpp-httplib (Debian's libcpp-httplib-dev 0.11, a compiled library): the HTTP server of `corun serve`
# (serve/http/) and the client of its tests. Its pkg-config flags (CPPHTTPLIB_OPENSSL_SUPPORT, ...) must reach
# every file that includes httplib.h, so that the header declares what the compiled library holds: link
# PkgConfig::CPP_HTTPLIB (GLOBAL: the tests link it too).
pkg_check_modules(CPP_HTTPLIB REQUIRED IMPORTED_TARGET GLOBAL cpp-httplib)
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

# The optional MPI component (engine/mpi/, docs/batch-jobs.md#several-nodes): `mpirun -np N corun train`
# over StarPU-MPI. AUTO turns it on when the StarPU we build against has starpumpi-1.3 and an MPI library is
# found; without it corun builds and tests as one process, and a multi-rank launch is refused.
set(CORUN_MPI AUTO CACHE STRING "Data-parallel training over MPI ranks with StarPU-MPI: AUTO, ON or OFF")
set_property(CACHE CORUN_MPI PROPERTY STRINGS AUTO ON OFF)
set(CORUN_WITH_MPI OFF)
if(NOT CORUN_MPI STREQUAL "OFF")
  pkg_check_modules(STARPUMPI IMPORTED_TARGET starpumpi-1.3)
  find_package(MPI COMPONENTS C QUIET)
  if(STARPUMPI_FOUND AND MPI_C_FOUND)
    set(CORUN_WITH_MPI ON)
  elseif(CORUN_MPI STREQUAL "ON")
    message(FATAL_ERROR "CORUN_MPI=ON but starpumpi-1.3 (found: ${STARPUMPI_FOUND}) or MPI (found: ${MPI_C_FOUND}) "
                        "is missing: apt-get install openmpi-bin libopenmpi-dev, and a StarPU built with MPI")
  endif()
endif()
# ONNX (Debian's libonnx-dev 1.12: the ONNX protobuf C++ classes, target onnx_proto): the importer, onnx/
# (corun_onnx, corun::import_onnx). Only the CLI and the tests link it, not the installed libraries.
find_package(Protobuf QUIET)
find_package(ONNX CONFIG QUIET)
if(NOT ONNX_FOUND OR NOT TARGET onnx_proto)
  message(FATAL_ERROR "ONNX (libonnx-dev) not found: the ONNX importer needs it; apt-get install libonnx-dev "
                      "libprotobuf-dev (scripts/setup.sh installs both)")
endif()

# oneDNN (Debian libdnnl-dev 2.6, OpenMP runtime): the conv2d codelets' blocked-layout kernels
# (codelets/conv2d/conv2d_dnnl.cpp). Optional: without it the convolutions run im2col + OpenBLAS only.
# Linked by name (dnnl, and gomp for omp_set_num_threads) so that the installed package names no imported
# target of it.
find_package(dnnl CONFIG QUIET)
set(CORUN_WITH_DNNL OFF)
if(dnnl_FOUND)
  set(CORUN_WITH_DNNL ON)
endif()

# libxsmm (Debian libxsmm-dev 1.17, static libraries in /usr/lib): JIT small-GEMM kernels for the serving
# runtime's per-step products, [batch rows, H] x [H, gates * units], where OpenBLAS's sgemm ran at half of
# one core's rate (serve/kernels/step_gemm.hpp). Optional: without it those products run OpenBLAS.
# Linked by path, like oneDNN by name, so that the installed package names no imported target of it.
find_path(LIBXSMM_INCLUDE_DIR libxsmm.h)
find_library(LIBXSMM_LIBRARY NAMES libxsmm.a xsmm)
set(CORUN_WITH_LIBXSMM OFF)
if(LIBXSMM_INCLUDE_DIR AND LIBXSMM_LIBRARY)
  set(CORUN_WITH_LIBXSMM ON)
endif()
