// base/npy_header.hpp — the header dict of a .npy file, parsed with NumPy's own grammar.
//
// NumPy reads the header with ast.literal_eval and then requires a dict of exactly the keys 'descr',
// 'fortran_order' and 'shape', where shape is a tuple of integers. This parser accepts the same literals
// (single- or double-quoted strings without escapes, True/False, tuples of decimal integers, a trailing
// comma, whitespace) and refuses everything NumPy refuses, plus duplicate keys: "(16.9, 32)",
// "(16, 32garbage)", "(5)" (an int, not a tuple) and extents that overflow 64 bits are errors, never a
// silently truncated shape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace corun::detail {

struct NpyHeader {
  std::string descr;           ///< the dtype string, e.g. "<f4"
  bool fortran_order = false;  ///< True: column-major data
  std::vector<int64_t> shape;  ///< the extents as written (empty: a NumPy scalar)
  std::string shape_text;      ///< the shape as written, for messages
};

/// Parses `text` (the header, padding and final newline included). On a malformed header throws
/// corun::Error (Status::io_error) naming `path` and what is wrong.
NpyHeader parse_npy_header(const std::string& text, const std::string& path);

}  // namespace corun::detail
