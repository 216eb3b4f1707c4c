# Compiles through ccache when it is installed (scripts/setup.sh installs it) and the project is top-level.
#
# Why: scripts/test.sh builds corun up to four times (Debian's StarPU, the source-built StarPU, ASan, TSan) and
# CI runs on a fresh clone in another folder. Two settings make those builds share one cache:
#   CCACHE_BASEDIR=<source dir>  paths under the checkout are hashed relative to it, so a clone elsewhere (CI's)
#                                hits what this checkout compiled;
#   CCACHE_NOHASHDIR=1           the build directory is not hashed (ccache hashes it by default with -g), so
#                                build/system and build/source share the objects of every file whose
#                                preprocessed text does not depend on StarPU's headers.
# The cost: an object reused from another build folder carries that folder as DW_AT_comp_dir in its debug
# information. -DCORUN_CCACHE=OFF (or a CMAKE_<LANG>_COMPILER_LAUNCHER of one's own) turns this off.
option(CORUN_CCACHE "Compile through ccache when it is found" ${CORUN_IS_MAIN_PROJECT})
if(CORUN_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER AND NOT CMAKE_C_COMPILER_LAUNCHER)
  find_program(CORUN_CCACHE_PROGRAM ccache)
  if(CORUN_CCACHE_PROGRAM)
    set(launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${PROJECT_SOURCE_DIR} CCACHE_NOHASHDIR=1
        ${CORUN_CCACHE_PROGRAM})
    set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
    message(STATUS "corun: compiling through ${CORUN_CCACHE_PROGRAM} (CORUN_CCACHE=OFF to stop)")
  endif()
endif()
