# `cmake --install` rules: public headers, the static libraries, the `corun` CLI, a CMake package
# (find_package(corun) -> corun::corun) and a pkg-config file (corun.pc). Details: docs/install.md.
#
# The libraries are static and link StarPU, OpenBLAS and hwloc through pkg-config imported targets
# (cmake/deps.cmake), so the package must find the very same StarPU again in the consumer: corun's
# objects are compiled against one StarPU's headers (STARPU_MAXCPUS sizes its structs). The package
# therefore remembers the directory of the starpu-1.3.pc it was built with and the StarPU prefix, looks
# there first, and refuses another StarPU with a message that says which one it needs.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(CORUN_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/corun" CACHE STRING
    "Where the CMake package files of corun are installed (relative to the prefix)")

# Where pkg-config found StarPU: the directory of starpu-1.3.pc (system: /usr/lib/<triplet>/pkgconfig;
# source build: <cache>/starpu-1.3.10-.../lib/pkgconfig, reached through PKG_CONFIG_PATH).
pkg_get_variable(CORUN_STARPU_PCFILEDIR starpu-1.3 pcfiledir)
if(NOT CORUN_STARPU_PCFILEDIR)
  message(FATAL_ERROR "pkg-config found starpu-1.3 but not its pcfiledir; cannot write the corun package")
endif()

# The libraries of the package, in static link order (a library before the ones it uses).
set(CORUN_PACKAGE_LIBRARIES corun_serve corun_serve_kernels corun corun_graphs corun_codelets corun_sched corun_numa corun_trace
                             corun_kernels corun_base)
# The public headers are C++17 (the library itself is built as C++20).
target_compile_features(corun_base INTERFACE cxx_std_17)

# corun_warnings is linked PRIVATE by every library; static libraries still name their private
# dependencies in the export (as $<LINK_ONLY:...>), so it is exported too. It carries compile options
# only, which LINK_ONLY never passes on.
install(TARGETS ${CORUN_PACKAGE_LIBRARIES} corun_warnings
        EXPORT corunTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
# The ONNX importer (corun::corun_onnx, corun/onnx.hpp) is an export set of its own, corunOnnxTargets:
# it needs libonnx-dev and protobuf in the consumer too, so corunConfig.cmake loads it only when it finds
# ONNX, as the component `onnx` (find_package(corun COMPONENTS onnx) makes it required).
install(TARGETS corun_onnx EXPORT corunOnnxTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT corunOnnxTargets NAMESPACE corun:: DESTINATION ${CORUN_INSTALL_CMAKEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/corun DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.hpp")

# The CLI keeps the StarPU library directory in its RPATH (a source-built StarPU lives outside the
# loader's search path).
set_target_properties(corun_cli PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
install(TARGETS corun_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

install(EXPORT corunTargets NAMESPACE corun:: DESTINATION ${CORUN_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/corunConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/corunConfig.cmake
                              INSTALL_DESTINATION ${CORUN_INSTALL_CMAKEDIR})
# 0.x: a new minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/corunConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/corunConfig.cmake ${PROJECT_BINARY_DIR}/corunConfigVersion.cmake
        DESTINATION ${CORUN_INSTALL_CMAKEDIR})

# corun.pc: relocatable (prefix from ${pcfiledir}). StarPU is written in as the flags pkg-config gave
# at configure time (plus an rpath when it is outside the system directories) rather than as
# `Requires: starpu-1.3`, which would resolve against whatever StarPU the consumer's PKG_CONFIG_PATH
# finds first.
set(CORUN_PC_LIBS "")
foreach(lib IN LISTS CORUN_PACKAGE_LIBRARIES)
  string(APPEND CORUN_PC_LIBS " -l${lib}")
endforeach()
if(CORUN_WITH_DNNL)
  string(APPEND CORUN_PC_LIBS " -ldnnl -lgomp")  # corun_kernels' oneDNN convolutions (cmake/deps.cmake)
endif()
if(CORUN_WITH_LIBXSMM)
  string(APPEND CORUN_PC_LIBS " ${LIBXSMM_LIBRARY} -ldl")  # corun_serve_kernels' step products (cmake/deps.cmake)
endif()
set(CORUN_PC_STARPU_LIBS "")
if(STARPU_LIBDIR AND NOT STARPU_LIBDIR IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
  set(CORUN_PC_STARPU_LIBS "-L${STARPU_LIBDIR} -Wl,-rpath,${STARPU_LIBDIR} ")
endif()
foreach(lib IN LISTS STARPU_LIBRARIES)
  string(APPEND CORUN_PC_STARPU_LIBS "-l${lib} ")
endforeach()
string(STRIP "${CORUN_PC_STARPU_LIBS}" CORUN_PC_STARPU_LIBS)
file(RELATIVE_PATH CORUN_PC_TO_PREFIX "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
string(REGEX REPLACE "/$" "" CORUN_PC_TO_PREFIX "${CORUN_PC_TO_PREFIX}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/corun.pc.in ${PROJECT_BINARY_DIR}/corun.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/corun.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
