# Warnings for in-tree targets only (an INTERFACE target that corun's own targets link).
add_library(corun_warnings INTERFACE)
target_compile_options(corun_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wno-unused-parameter>)
