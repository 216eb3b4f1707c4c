// oneDNN convolution kernels (issue 18 item 1): forward, backward-data and backward-weights through
// oneDNN 2.6 primitives created with format `any`, so that oneDNN picks its blocked layouts (nChw16c /
// nChw8c activations, OIhw16i16o / OIhw8i8o filters) and with them its direct `jit:avx512_core` / `jit:avx2`
// kernels instead of the `gemm:jit` fallback it uses on plain NCHW/OIHW buffers. The kernels reorder the
// graph's plain buffers into those layouts and the results back, inside the task.
//
// Width independence by construction (the same scheme as the im2col kernels):
//   forward, backward-data  the batch is cut into fixed chunks of kDnnlImageChunk images; a batch of one
//                           chunk (inference at small batch) is cut instead into tiles of its output
//                           (forward) or input (backward-data) channels, whole 16-channel blocks (whole
//                           groups with groups), up to conv_work_items() tiles (a cut that depends on the
//                           shape and that process-wide count only: at batch 1 and 16 items a forward of 512
//                           output channels is 16 tiles of 32); members take whole chunks or tiles, and each
//                           is the same primitive call at every width (a tile reads strided views of the plain
//                           buffers);
//   backward-weights        the output channels are cut into fixed tiles of kDnnlFilterTile (with groups:
//                           of whole groups, kDnnlFilterTile output channels' worth, so a depthwise tile is
//                           one nChw16c block of X, dY and dW); a member runs one primitive per tile over
//                           the whole batch, so the batch sum happens inside one primitive call in one
//                           order at every width.
// Primitives, reorders and their blocked buffers and scratchpads are created on first use per (pass, shape,
// slice) in a cache of the calling thread (one per StarPU worker), never per call. oneDNN's runtime in
// Debian's libdnnl is OpenMP: each thread that runs these kernels sets its OpenMP thread count to 1 before
// its first primitive, so a worker never spawns a nested team.
//
// The dispatch (conv2d_fast.cpp) runs these only when the implementation list (conv_impls.hpp) picks one of
// the oneDNN entries; otherwise the direct or im2col + OpenBLAS kernels run.
#pragma once

#include "codelets/conv2d/conv2d.hpp"

#include <string>

namespace corun::codelets {

/// What CORUN_CONV_KERNEL prefers of the implementation list (conv_impls.hpp; read by engine/config.cpp, applied
/// per node by the engine's plan step): `dnnl` oneDNN wherever it runs the call, `direct` `auto` without
/// oneDNN's Winograd kernels, `im2col` no oneDNN.
enum class ConvKernel { auto_, dnnl, direct, im2col };

/// Images per forward / backward-data primitive call: the fixed cut of the batch.
inline constexpr int64_t kDnnlImageChunk = 4;
/// Output channels per backward-weights primitive call: the fixed cut of the filters.
inline constexpr int64_t kDnnlFilterTile = 16;
/// Channels per unit of a forward / backward-data channel tile (oneDNN's AVX-512 block).
inline constexpr int64_t kDnnlChannelBlock = 16;
/// The most channel tiles a forward or backward-data call of one image chunk is cut into.
inline constexpr int64_t kDnnlMaxWorkItems = 16;

/// Sets the tiles a forward or backward-data call of one image chunk is cut into when its channels allow (1 to
/// kDnnlMaxWorkItems; the default, kDnnlMaxWorkItems, is what the op harness tests). The engine sets its CPU
/// worker count (at most 16) at start-up: the widest team a call can feed. A process-wide constant, never the
/// team width: the cut, hence the bits, never depend on the width or the policy (they may on the machine's
/// core count, as they do on its vector ISA).
void set_conv_work_items(int64_t items);
int64_t conv_work_items();

/// The channel block of the activation layout oneDNN's direct convolution kernels take on this CPU (16 for
/// nChw16c on AVX-512, 8 for nChw8c on AVX2), or 0 without them: the layout Graph::block_layouts keeps tensors
/// in between convolutions (conv_layout.hpp).
int64_t dnnl_channel_block();

/// "oneDNN 2.6.3, activations nChw16c" (its version and the blocked layout of its kernels on this CPU), or why
/// the convolutions run im2col + OpenBLAS only: for `corun info` and the benchmark tables.
std::string dnnl_description();

/// True when this build has oneDNN, the CPU has AVX2 (where oneDNN's direct kernels start) and the
/// geometry is one the oneDNN kernels handle (any groups, stride, padding and dilation).
bool dnnl_conv_supported(const ConvGeometry& g);
/// Why dnnl_conv_supported() is false for a geometry: no oneDNN in this build, no AVX2, or an empty shape.
std::string dnnl_unsupported_reason();

/// Whether `call` (a conv2d, conv2d_grad_data or conv2d_grad_filter; false for every other kind) runs the
/// oneDNN kernels (conv_impl_of): its perfmodel footprint then differs from the im2col one, so that the
/// per-width models keep the two kernels' timings apart.
bool call_uses_dnnl_conv(const OpCall& call);
/// The same for the Winograd kernels (their timings kept apart from the direct kernels' too).
bool call_uses_winograd_conv(const OpCall& call);

/// The kernels (same signature and buffers as conv2d_fast & co; only valid when dnnl_conv_supported).
void conv2d_dnnl(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_data_dnnl(const OpCall& call, float* const* buf, int rank, int width);
void conv2d_grad_filter_dnnl(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
