// The convolution's implementations as an ordered list, as oneDNN keeps its own per primitive
// (cpu_convolution_list.cpp): a call runs the first one that takes it, and each one that does not says why.
//
//   onednn-winograd  oneDNN's Winograd F(4x4, 3x3) kernels (AVX-512 only; 3x3 "same" layers, measured faster)
//   onednn-plain     oneDNN's gemm:jit on the graph's own NCHW / OIHW buffers (1x1 layers on large maps)
//   onednn           oneDNN's direct kernels in its blocked layouts (nChw16c / nChw8c)
//   direct           corun's direct loops for depthwise layers
//   im2col           im2col + one OpenBLAS sgemm per image and group (takes every call)
// (The reference kernel, CORUN_KERNELS=ref, replaces the fast path of every op at once: it is not a list entry.)
//
// The choice depends on the geometry, the pass and what CORUN_CONV_KERNEL prefers, never on the team width,
// so the bits never depend on the width. The engine's plan step chooses once per node (OpCall::impl) and
// CORUN_VERBOSE=kernels prints the choice and the declines; a call nobody chose for (an op harness call, a
// graph run without the plan step) is chosen at run time under `auto`. Split-aware kernels plug in here.
#pragma once

#include "codelets/conv2d/conv2d_dnnl.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace corun::codelets {

/// A convolution implementation (OpCall::impl of conv2d, conv2d_grad_data and conv2d_grad_filter).
enum class ConvImpl : uint8_t { unchosen = 0, onednn_winograd, onednn_plain, onednn, direct, im2col };

/// One entry of the list: its name and the reason it declines a call ("" when it takes it).
struct ConvImplEntry {
  ConvImpl impl;
  const char* name;
  std::string (*declines)(const ConvGeometry& g, OpKind pass, ConvKernel preference);
};

/// The implementations in the order they are tried.
const std::vector<ConvImplEntry>& conv_impls();

/// The implementation a call of `pass` on `g` runs under `preference`, and why each one before it declined.
struct ConvChoice {
  ConvImpl impl = ConvImpl::im2col;
  std::vector<std::pair<const char*, std::string>> declined;  ///< (name, reason), in list order
};
ConvChoice choose_conv(const ConvGeometry& g, OpKind pass, ConvKernel preference);

/// The geometry of a convolution pass's call (conv2d, conv2d_grad_data, conv2d_grad_filter), nullopt otherwise.
std::optional<ConvGeometry> conv_pass_geometry(const OpCall& call);

/// The implementation `call` runs: the one chosen for it (OpCall::impl), else the list's choice under `auto`.
/// ConvImpl::unchosen for a call that is not a convolution pass (conv2d, conv2d_grad_data, conv2d_grad_filter).
ConvImpl conv_impl_of(const OpCall& call);

/// The name of `impl` ("onednn-winograd", ...).
const char* conv_impl_name(ConvImpl impl);

/// Whether `impl` runs oneDNN, and in its blocked layouts (Graph::block_layouts keeps those convolutions'
/// activations blocked).
inline bool is_onednn(ConvImpl impl) {
  return impl == ConvImpl::onednn_winograd || impl == ConvImpl::onednn_plain || impl == ConvImpl::onednn;
}
inline bool is_onednn_blocked(ConvImpl impl) { return impl == ConvImpl::onednn_winograd || impl == ConvImpl::onednn; }

/// Sets `call.impl` (and its group members') to the list's choice under `preference`: the engine's plan step
/// for every node, and a test or benchmark that runs one implementation. Nothing for other kinds.
void choose_conv_impl(OpCall& call, ConvKernel preference);

/// CORUN_CONV_KERNEL's value as a preference ("auto", "dnnl", "direct", "im2col").
ConvKernel parse_conv_kernel(const std::string& name);

/// The entries' reasons, for the rules' own tests: why oneDNN's blocked kernels and its Winograd kernels
/// decline a call ("" when they take it). onednn_declines is also the first reason of the two other oneDNN
/// entries.
std::string onednn_declines(const ConvGeometry& g, OpKind pass, ConvKernel preference);
std::string winograd_declines(const ConvGeometry& g, OpKind pass, ConvKernel preference);
/// onednn_declines(...).empty(): oneDNN runs the call in one of its entries.
bool use_dnnl_conv(const ConvGeometry& g, OpKind pass, ConvKernel preference = ConvKernel::auto_);

}  // namespace corun::codelets
