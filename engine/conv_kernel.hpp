// The kernel choices of the ops with an implementation list (the convolutions' CORUN_CONV_KERNEL, the
// products' CORUN_GEMM_KERNEL), for the Engine (from its Config) and the InlineRunner (which has no Config),
// so that both run the same kernels and give the same bits. Both are made per node by the plan step
// (choose_kernels, engine/kernel_choice.cpp) into OpCall::impl; nothing is a process-wide setting.
#pragma once

#include <corun/graph.hpp>

#include <string>

namespace corun::engine {

/// What the Config prefers for each list: Config::conv_kernel ("auto", "dnnl", "direct", "im2col") and
/// Config::gemm_kernel ("auto", "onednn", "openblas").
struct KernelPreferences {
  std::string conv = "auto";
  std::string gemm = "auto";
};

/// The plan step's kernel choice: every node with an implementation list (the convolution passes, matmul,
/// batch_matmul) that has none chosen yet gets the list's choice under `preferences` (a group's members too);
/// with `verbose`, one line per node on stderr with the choice and each decline. Returns the nodes chosen for.
int choose_kernels(Graph& graph, const KernelPreferences& preferences, bool verbose);

/// CORUN_CONV_KERNEL and CORUN_GEMM_KERNEL alone, strictly parsed ("auto" when unset); defined in
/// engine/config.cpp, the only place that reads CORUN_* variables.
KernelPreferences kernel_preferences_from_env();

}  // namespace corun::engine
