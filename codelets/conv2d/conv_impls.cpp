// The convolution's ordered implementation list (conv_impls.hpp), the rules measured for `auto` behind each
// entry's reasons (oneDNN or im2col, plain or blocked layouts, Winograd or direct, depthwise loops), and the
// markers that keep their perfmodel timings apart. Shape, pass and preference only, never the width.
#include "codelets/conv2d/conv_impls.hpp"

#include <algorithm>
#include <atomic>
#include <optional>

#ifdef CORUN_HAVE_DNNL
#include <dnnl.h>
#endif

namespace corun::codelets {

namespace {
std::atomic<int64_t> g_work_items{kDnnlMaxWorkItems};
}  // namespace

void set_conv_work_items(int64_t items) { g_work_items.store(std::clamp<int64_t>(items, 1, kDnnlMaxWorkItems)); }
int64_t conv_work_items() { return g_work_items.load(); }

ConvKernel parse_conv_kernel(const std::string& name) {
  return name == "dnnl" ? ConvKernel::dnnl : name == "direct" ? ConvKernel::direct : name == "im2col" ? ConvKernel::im2col
                                                                                                    : ConvKernel::auto_;
}

std::string onednn_declines(const ConvGeometry& g, OpKind pass, ConvKernel preference) {
  if (preference == ConvKernel::im2col) return "CORUN_CONV_KERNEL=im2col";
  if (!dnnl_conv_supported(g)) return dnnl_unsupported_reason();
  if (preference == ConvKernel::dnnl) return "";
  // auto, the rule measured by bench/conv_kernels.sh on a quiet machine (bench/results/conv-kernels-*.md,
  // CIFAR-quick and PathNet shapes, one thread, AVX-512): oneDNN's direct kernels were 1.5-9x faster than
  // im2col + OpenBLAS in the forward and backward-filter passes at every input channel count (1, 3, 16, 32),
  // and in backward-data from 3 input channels (with 3 about even: 0.8-1.3x over three runs); backward-data
  // with one input channel was 2.5-2.8x slower on oneDNN (the channel is padded to a block of 8): im2col.
  // Dilated windows run oneDNN's gemm:jit in backward (im2col + GEMM itself), and fewer than 8 output
  // channels were not measured: both stay on im2col.
  // (The forward pass sat on im2col for a while: onnx.model.resnet18's gradients with the AVX2 oneDNN
  // forward differed from PyTorch's by 7e-2. The cause was one ReLU input within float32 rounding of zero,
  // rounded to the other side: docs/models.md, "Convolution kernels". The check now recognises such a kink.)
  if (g.dh != 1 || g.dw != 1) return "a dilated window (oneDNN's backward runs im2col + GEMM itself)";
  // Depthwise (one input and one output channel per group, MobileNet's 3x3 layers; bench/conv_kernels.sh on
  // MobileNetV2's shapes at 64 px, batch 16): oneDNN's jit_dw kernels in nChw16c were 6-16x faster than the
  // direct loops in forward, 3-12x in backward-data and 4-7x in backward-filter. With an input smaller than
  // the window (MobileNetV2's last 2x2 maps under a 3x3 window) oneDNN has no jit_dw backward-weights and
  // falls back to gemm:jit, 3x slower than the direct loops: that one stays on them. Other groupings (ResNeXt)
  // were not measured and stay on im2col.
  if (g.groups > 1) {
    if (g.cg() != 1 || g.kg() != 1) return "groups of more than one channel (not measured; only depthwise is)";
    if (pass == OpKind::conv2d_grad_filter && (g.h < g.r || g.w < g.s))
      return "depthwise backward-weights on a map smaller than the window (oneDNN's gemm:jit, 3x slower)";
    return "";
  }
  if (g.kg() < 8) return "fewer than 8 output channels (not measured)";
  if (pass == OpKind::conv2d_grad_data && g.cg() < 3)
    return "backward-data with fewer than 3 input channels (2.5-2.8x slower on oneDNN: padded to a block)";
  return "";
}

bool use_dnnl_conv(const ConvGeometry& g, OpKind pass, ConvKernel preference) {
  return onednn_declines(g, pass, preference).empty();
}

namespace {

std::string plain_declines(const ConvGeometry& g, OpKind pass, ConvKernel preference) {
  if (std::string why = onednn_declines(g, pass, preference); !why.empty()) return why;
  // bench/conv_kernels.sh on MobileNetV2's and ResNet-50's 1x1 layers (64 px, batch 16, one thread, AVX-512;
  // bench/results/conv-kernels-20261204-*.md): on 16x16 maps oneDNN's gemm:jit on the plain buffers took
  // 0.55-0.8x the time of the blocked kernels with their reorders in forward and 0.45-0.55x in backward-data
  // (one GEMM of the whole map per image, and no reorders); on 8x8 maps the two were even, and on 4x4 and 2x2
  // maps gemm:jit was 1.3-5x slower (GEMMs 16 or 4 columns wide). Backward-filter on the plain layouts, one
  // GEMM per 16-channel tile and image, was no faster than the blocked kernel at any map size (tiles of 32 and
  // 64 channels neither, over three runs): it stays blocked.
  if (pass == OpKind::conv2d_grad_filter) return "backward-weights (measured no faster than the blocked kernels)";
  if (g.groups != 1 || !identity_cols(g)) return "not a 1x1 stride-1 unpadded convolution without groups";
  if (g.h * g.w < 256) return "a map smaller than 16x16 (gemm:jit even or slower there)";
  return "";
}

std::string direct_declines(const ConvGeometry& g, OpKind, ConvKernel) {
  return direct_depthwise(g) ? "" : "not depthwise with a window (the direct loops are for one channel per group)";
}

std::string im2col_declines(const ConvGeometry&, OpKind, ConvKernel) { return ""; }

}  // namespace

std::optional<ConvGeometry> conv_pass_geometry(const OpCall& call) {
  const auto& s = call.shapes;
  switch (call.kind) {
    case OpKind::conv2d: return ConvGeometry::of(call, s[0], s[1], s.back());
    case OpKind::conv2d_grad_data: return ConvGeometry::of(call, s[2], s[1], s[0]);
    case OpKind::conv2d_grad_filter: return ConvGeometry::of(call, s[0], s[2], s[1]);
    default: return std::nullopt;
  }
}

const std::vector<ConvImplEntry>& conv_impls() {
  static const std::vector<ConvImplEntry> list{
      {ConvImpl::onednn_winograd, "onednn-winograd", winograd_declines},
      {ConvImpl::onednn_plain, "onednn-plain", plain_declines},
      {ConvImpl::onednn, "onednn", onednn_declines},
      {ConvImpl::direct, "direct", direct_declines},
      {ConvImpl::im2col, "im2col", im2col_declines},
  };
  return list;
}

const char* conv_impl_name(ConvImpl impl) {
  for (const ConvImplEntry& e : conv_impls())
    if (e.impl == impl) return e.name;
  return "unchosen";
}

ConvChoice choose_conv(const ConvGeometry& g, OpKind pass, ConvKernel preference) {
  ConvChoice c;
  for (const ConvImplEntry& e : conv_impls()) {
    std::string why = e.declines(g, pass, preference);
    if (why.empty()) {
      c.impl = e.impl;
      return c;
    }
    c.declined.emplace_back(e.name, std::move(why));
  }
  return c;  // im2col takes every call: not reached
}

ConvImpl conv_impl_of(const OpCall& call) {
  const auto g = conv_pass_geometry(call);
  if (!g) return ConvImpl::unchosen;
  if (call.impl != 0) return static_cast<ConvImpl>(call.impl);
  return choose_conv(*g, call.kind, ConvKernel::auto_).impl;
}

void choose_conv_impl(OpCall& call, ConvKernel preference) {
  for (OpCall& m : call.members) choose_conv_impl(m, preference);
  if (const auto g = conv_pass_geometry(call)) call.impl = static_cast<uint8_t>(choose_conv(*g, call.kind, preference).impl);
}

bool call_uses_dnnl_conv(const OpCall& call) { return is_onednn(conv_impl_of(call)); }
bool call_uses_winograd_conv(const OpCall& call) { return conv_impl_of(call) == ConvImpl::onednn_winograd; }

#ifdef CORUN_HAVE_DNNL

std::string winograd_declines(const ConvGeometry& g, OpKind pass, ConvKernel preference) {
  // One thread, quiet 2-core AMD Zen 4 (AVX-512), oneDNN 2.6.3, the slices conv2d_dnnl.cpp cuts (chunks of 4
  // images, backward-weights tiles of 16 filters over the whole batch), against the direct kernels: on 16x16
  // and 32x32 maps (GoogLeNet's and ResNet's early 3x3 layers: 64 -> 192 and 64 -> 64 channels) forward
  // 2.1-2.3x, backward-data 1.6-2.3x, backward-weights 1.3-1.5x faster; on 8x8 maps 0.9-1.2x, on 4x4 0.3x.
  // 32 -> 32 channels on 32x32: 1.8x, 1.6x, 1.5x; on 16x16 1.2x, 1.2x and 0.9x (backward-weights of 4 images;
  // whole batches amortise its transforms). With 16 channels (PathNet's) the gains were mixed (forward 0.7-1.0x,
  // backward-weights 0.6x on 4 images, 1.3x on 64): those stay direct. docs/models.md, "Winograd", has the
  // table. The results differed from the direct kernels' by 1-3e-6 of the output's largest magnitude.
  // oneDNN has f32 Winograd kernels for avx512_core only (none for AVX2).
  static const bool kernels = dnnl_get_effective_cpu_isa() >= dnnl_cpu_isa_avx512_core;
  if (preference == ConvKernel::direct) return "CORUN_CONV_KERNEL=direct";
  if (std::string why = onednn_declines(g, pass, preference); !why.empty()) return why;
  if (!kernels) return "oneDNN has f32 Winograd kernels for AVX-512 only";
  const bool same_3x3 = g.groups == 1 && g.r == 3 && g.s == 3 && g.sh == 1 && g.sw == 1 && g.dh == 1 && g.dw == 1 &&
                        g.pt == 1 && g.pl == 1 && g.oh == g.h && g.ow == g.w;
  if (!same_3x3) return "not a 3x3 stride-1 'same' convolution without groups";
  if (g.oh < 16 || g.ow < 16) return "a map smaller than 16x16 (0.3-1.2x the direct kernels there)";
  if (g.c % 16 != 0 || g.k % 16 != 0 || g.c < 32 || g.k < 32) return "fewer than 32 channels, or not whole blocks of 16";
  if (g.n <= kDnnlImageChunk) return "one image chunk (its transforms are not amortised)";
  return "";
}

bool dnnl_conv_supported(const ConvGeometry& g) {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 && g.groups >= 1 && g.n > 0 && g.c > 0 && g.k > 0 && g.oh > 0 && g.ow > 0;
}

std::string dnnl_unsupported_reason() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2 ? "an empty shape" : "the CPU has no AVX2 (oneDNN's direct kernels start there)";
}

#else

std::string winograd_declines(const ConvGeometry&, OpKind, ConvKernel) { return "this build has no oneDNN"; }
bool dnnl_conv_supported(const ConvGeometry&) { return false; }
std::string dnnl_unsupported_reason() { return "this build has no oneDNN (libdnnl-dev)"; }

#endif  // CORUN_HAVE_DNNL

}  // namespace corun::codelets
