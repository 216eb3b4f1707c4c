// What every oneDNN caller among the kernels shares (the convolutions, codelets/conv2d/conv2d_dnnl.cpp, and
// the products, codelets/matmul/sgemm_backend.cpp). Only meaningful in a build with oneDNN (CORUN_HAVE_DNNL).
#pragma once

#include <string>

namespace corun::codelets {

/// Bounds oneDNN's OpenMP team to the calling thread (a StarPU worker), once per thread: Debian's libdnnl
/// runs OpenMP, and a team member must never spawn a nested team. Call before a thread's first oneDNN call.
void onednn_one_thread();

/// "oneDNN 2.6.3": the library's version, for `corun info` and the benchmark tables.
std::string onednn_version();

}  // namespace corun::codelets
