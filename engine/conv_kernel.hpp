// The convolutions' and the products' kernel choices (CORUN_CONV_KERNEL, CORUN_GEMM_KERNEL), for the Engine (from
// its Config) and the InlineRunner (which has no Config), so that both run the same kernels and give the same
// bits. The convolutions' choice is made per node by the plan step (choose_kernels); the products' library is
// still handed down as a process-wide setting.
#pragma once

#include <corun/graph.hpp>

#include <string>

namespace corun::engine {

/// The plan step's kernel choice: every node with an implementation list (the convolution passes) that has
/// none chosen yet gets the list's choice under `conv_kernel` (Config::conv_kernel: "auto", "dnnl", "direct",
/// "im2col"); with `verbose`, one line per node on stderr with the choice and each decline. Returns the nodes
/// chosen for.
int choose_kernels(Graph& graph, const std::string& conv_kernel, bool verbose);

/// CORUN_CONV_KERNEL alone, strictly parsed ("auto" when unset); defined in engine/config.cpp, the only
/// place that reads CORUN_* variables.
std::string conv_kernel_from_env();

/// The same for the products' library (CORUN_GEMM_KERNEL, Config::gemm_kernel: "auto", "onednn", "openblas").
void apply_gemm_kernel(const std::string& choice);
std::string gemm_kernel_from_env();

}  // namespace corun::engine
