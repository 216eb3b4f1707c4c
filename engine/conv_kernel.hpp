// The convolutions' and the products' kernel choices (CORUN_CONV_KERNEL, CORUN_GEMM_KERNEL) handed down to the codelets
// layer, by the Engine (from its Config) and by the InlineRunner (which has no Config), so that both run
// the same kernels and give the same bits.
#pragma once

#include <string>

namespace corun::engine {

/// Sets the codelets' convolution kernels from a Config::conv_kernel value ("auto", "dnnl", "direct", "im2col").
void apply_conv_kernel(const std::string& choice);

/// CORUN_CONV_KERNEL alone, strictly parsed ("auto" when unset); defined in engine/config.cpp, the only
/// place that reads CORUN_* variables.
std::string conv_kernel_from_env();

/// The same for the products' library (CORUN_GEMM_KERNEL, Config::gemm_kernel: "auto", "onednn", "openblas").
void apply_gemm_kernel(const std::string& choice);
std::string gemm_kernel_from_env();

}  // namespace corun::engine
