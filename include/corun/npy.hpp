// corun/npy.hpp — tensors as NumPy .npy files (format 1.0/2.0/3.0, little-endian f32, C order).
//
//   corun::save_npy("w0.npy", shape, data);       // np.load("w0.npy") in NumPy
//   corun::NpyArray a = corun::load_npy("w0.npy"); // a.shape, a.data
//
// Files that are not .npy, have another dtype ('<f8', '>f4', ...), are Fortran-ordered, have more than 4
// dimensions or are truncated are a corun::Error (Status::io_error) naming the file and the problem. The
// header is read with NumPy's own grammar (a dict of exactly 'descr', 'fortran_order' and 'shape'; integer
// extents only: "(16.9, 32)" or "(16, 32garbage)" are errors, as in NumPy), every size is checked against
// the file before anything is allocated, and only regular files are opened (a FIFO or a device is refused
// at once, never waited on).
// save_npy writes a temporary file in the same directory and renames it, so a crash never leaves a
// half-written file under the final name.
#pragma once

#include <corun/tensor.hpp>

#include <string>
#include <vector>

namespace corun {

struct NpyArray {
  Shape shape;
  std::vector<float> data;
};

void save_npy(const std::string& path, const Shape& shape, const float* data);
NpyArray load_npy(const std::string& path);

}  // namespace corun
