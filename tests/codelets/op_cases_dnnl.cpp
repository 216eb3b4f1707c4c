// Op cases of the oneDNN convolution kernels (issue 18 item 1), run by test_ops' DnnlConv suite with
// CORUN_CONV_KERNEL=dnnl forced: batches that leave a short last chunk of kDnnlImageChunk images, output
// channel counts that leave a short last filter tile of kDnnlFilterTile, channel counts below, at and
// above oneDNN's vector blocks (3: plain-layout source; 8: avx2 block; 24: 16 + 8), stride 2, asymmetric
// padding with dilation, 1x1 (on a 6x6 map blocked, on 16x16 and 17x16 maps the plain layouts), no bias, the CIFAR-quick conv3 shape on 3 images, and ResNet-18's stem (7x7
// stride 2 from 3 channels) and first downsampling convolution without bias, as the ONNX import makes them.
// Groups: depthwise (a channel count that leaves a short last tile of 16 groups, stride 2 with asymmetric
// padding, dilation, a channel multiplier of 2) and a grouped convolution with 4 input and 8 output channels
// per group (two groups per backward-weights tile). Batches of 1 and 2, one image chunk each: forward and
// backward-data cut into channel tiles instead (conv_work_items(): 16 outside an engine), a short last
// tile included. Some forwards again with X, Y or both in the blocked layouts of Graph::block_layouts. 3x3
// "same" convolutions of 32 and 48 channels on 16x18 and 17x16 maps at batches 6 and 5: oneDNN's Winograd
// kernels on AVX-512 (onednn-winograd in conv_impls.hpp).
#include "op_cases.hpp"

#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv_layout.hpp"

#include <string>
#include <utility>

namespace corun::codelets::testing {

std::vector<OpCaseSpec> dnnl_conv_op_cases() {
  constexpr Access R = Access::read;
  constexpr Access W = Access::write;
  struct Geometry {
    const char* name;
    int64_t n, c, h, w, k, r, s;
    ConvParams p;
    bool bias;
  };
  const Geometry cases[] = {
      {"n10_c16_k20_3x3", 10, 16, 9, 7, 20, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}, true},
      {"n5_c8_k32_5x5_s2", 5, 8, 12, 11, 32, 5, 5, {2, 2, 2, 2, 2, 2, 1, 1, 1}, true},
      {"n3_c3_k8_3x3", 3, 3, 11, 11, 8, 3, 3, {1, 1, 0, 0, 0, 0, 1, 1, 1}, true},
      {"n6_c12_k17_dilated_pads", 6, 12, 10, 9, 17, 3, 2, {2, 1, 1, 0, 2, 1, 2, 1, 1}, false},
      {"n9_c24_k40_1x1", 9, 24, 6, 6, 40, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}, false},
      // 1x1 on a 16x16 map: forward and backward-data on the plain layouts (onednn-plain in conv_impls.hpp, gemm:jit).
      {"n7_c24_k36_1x1_plain", 7, 24, 16, 16, 36, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}, true},
      {"n5_c20_k12_1x1_plain_17x16", 5, 20, 17, 16, 12, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}, false},
      {"n1_c16_k16_3x3", 1, 16, 5, 5, 16, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}, true},
      {"cifar_quick_conv3_n3", 3, 32, 6, 6, 64, 5, 5, {1, 1, 2, 2, 2, 2, 1, 1, 1}, true},
      {"resnet18_stem_n5", 5, 3, 16, 16, 64, 7, 7, {2, 2, 3, 3, 3, 3, 1, 1, 1}, false},
      {"resnet18_layer2_down_n5", 5, 64, 8, 8, 128, 3, 3, {2, 2, 1, 1, 1, 1, 1, 1, 1}, false},
      {"depthwise_n6_c40_3x3", 6, 40, 7, 6, 40, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 40}, true},
      {"depthwise_n5_c24_s2_pads", 5, 24, 9, 10, 24, 3, 3, {2, 2, 1, 0, 0, 1, 1, 1, 24}, false},
      {"depthwise_n3_c16_dilated", 3, 16, 9, 9, 16, 3, 3, {1, 1, 2, 2, 2, 2, 2, 2, 16}, true},
      {"depthwise_n4_c8_k16_multiplier2", 4, 8, 6, 6, 16, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 8}, true},
      {"grouped_n5_c16_k32_g4", 5, 16, 6, 5, 32, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 4}, true},
      // Batch 1: channel tiles (forward 7 tiles of 16 output channels, the last of 4; backward-data 3 tiles
      // of 16 input channels, the last of 8), in blocked and plain layouts, and depthwise tiles of 16 groups.
      {"n1_c40_k100_3x3_tiles", 1, 40, 6, 5, 100, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}, true},
      {"n1_c40_k100_1x1_plain_tiles", 1, 40, 16, 16, 100, 1, 1, {1, 1, 0, 0, 0, 0, 1, 1, 1}, true},
      {"n2_c600_k40_3x3_wide_tiles", 2, 600, 4, 4, 40, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}, false},
      {"depthwise_n1_c72_tiles", 1, 72, 5, 5, 72, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 72}, true},
      {"n1_c32_k96_3x3_tiles", 1, 32, 5, 4, 96, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}, false},
      // 3x3 "same" on maps of 16x16 and more, >= 32 channels in whole blocks, more than one image chunk: oneDNN's
      // Winograd kernels where it has them (onednn-winograd: AVX-512), the direct ones elsewhere: short last image
      // chunks (6 and 5 images), 2 and 3 backward-weights tiles, non-square maps, with and without bias.
      {"winograd_n6_c32_k48_16x18", 6, 32, 16, 18, 48, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}, true},
      {"winograd_n5_c48_k32_17x16", 5, 48, 17, 16, 32, 3, 3, {1, 1, 1, 1, 1, 1, 1, 1, 1}, false},
  };
  // Blocked layouts (Graph::block_layouts): X and Y in oneDNN's nChw<B>c (B as this CPU's kernels take it; 8
  // without them, where the reference and fallback kernels still take it), each side alone and both.
  const int64_t block = dnnl_channel_block() != 0 ? dnnl_channel_block() : 8;
  struct Blocked {
    const char* geometry;
    bool x, y;
    ConvActivation act;
  };
  const Blocked blocked[] = {
      {"cifar_quick_conv3_n3", true, true, ConvActivation::none},
      {"cifar_quick_conv3_n3", true, false, ConvActivation::relu},
      {"resnet18_layer2_down_n5", false, true, ConvActivation::none},
      {"resnet18_layer2_down_n5", true, true, ConvActivation::relu},
      {"depthwise_n3_c16_dilated", true, true, ConvActivation::clip},
      {"n1_c16_k16_3x3", true, true, ConvActivation::none},
      {"n1_c32_k96_3x3_tiles", true, true, ConvActivation::relu},
      {"n1_c32_k96_3x3_tiles", false, true, ConvActivation::none},
      {"winograd_n6_c32_k48_16x18", true, true, ConvActivation::relu},
      {"winograd_n6_c32_k48_16x18", true, true, ConvActivation::none},
      {"winograd_n5_c48_k32_17x16", false, true, ConvActivation::none},
      {"winograd_n5_c48_k32_17x16", true, false, ConvActivation::none},
};
  std::vector<OpCaseSpec> out;
  for (const Geometry& q : cases) {
    const ConvParams& p = q.p;
    const int64_t oh = (q.h + p.pad_top + p.pad_bottom - p.dilation_h * (q.r - 1) - 1) / p.stride_h + 1;
    const int64_t ow = (q.w + p.pad_left + p.pad_right - p.dilation_w * (q.s - 1) - 1) / p.stride_w + 1;
    const Shape x{q.n, q.c, q.h, q.w}, wt{q.k, q.c / p.groups, q.r, q.s}, b{q.k}, y{q.n, q.k, oh, ow};
    const auto a = p.attrs();
    const std::string name = std::string("dnnl_") + q.name;
    if (q.bias) {
      out.push_back(make("conv2d_" + name, OpKind::conv2d, {x, wt, b, y}, {R, R, R, W}, a));
      out.push_back(make("conv2d_grad_filter_" + name, OpKind::conv2d_grad_filter, {x, y, wt, b}, {R, R, W, W}, a));
    } else {
      out.push_back(make("conv2d_" + name, OpKind::conv2d, {x, wt, y}, {R, R, W}, a));
      out.push_back(make("conv2d_grad_filter_" + name, OpKind::conv2d_grad_filter, {x, y, wt}, {R, R, W}, a));
    }
    out.push_back(make("conv2d_grad_data_" + name, OpKind::conv2d_grad_data, {y, wt, x}, {R, R, W}, a));
    // A fused activation (Graph::fuse_conv_activation) on the forward of some geometries: relu, or a clip to
    // [-0.5, 0.5] whose both bounds bite.
    const std::pair<const char*, ConvActivation> fused[] = {
      {"n10_c16_k20_3x3", ConvActivation::relu}, {"n7_c24_k36_1x1_plain", ConvActivation::clip},
      {"depthwise_n6_c40_3x3", ConvActivation::clip}, {"n1_c40_k100_3x3_tiles", ConvActivation::relu}};
    for (const auto& [geometry, act] : fused) {
      if (std::string(geometry) != q.name) continue;
      auto af = a;
      ConvEpilogue::set(af, act, -0.5f, 0.5f);
      const std::string suffix = act == ConvActivation::relu ? "_relu" : "_clip";
      if (q.bias) out.push_back(make("conv2d_" + name + suffix, OpKind::conv2d, {x, wt, b, y}, {R, R, R, W}, af));
      else out.push_back(make("conv2d_" + name + suffix, OpKind::conv2d, {x, wt, y}, {R, R, W}, af));
    }
    for (const Blocked& l : blocked) {
      if (std::string(l.geometry) != q.name) continue;
      auto al = a;
      ConvEpilogue::set(al, l.act, -0.5f, 0.5f);
      ConvLayouts::set(al, l.x ? block : 0, l.y ? block : 0);
      const std::string suffix = std::string("_blocked") + (l.x ? "_x" : "") + (l.y ? "_y" : "") +
                                 (l.act == ConvActivation::relu ? "_relu" : l.act == ConvActivation::clip ? "_clip" : "");
      if (q.bias) out.push_back(make("conv2d_" + name + suffix, OpKind::conv2d, {x, wt, b, y}, {R, R, R, W}, al));
      else out.push_back(make("conv2d_" + name + suffix, OpKind::conv2d, {x, wt, y}, {R, R, W}, al));
      if (l.act != ConvActivation::none) continue;
      // The gradients in the same layouts (training graphs): dX on X's side, dY on Y's.
      auto ag = a;
      ConvLayouts::set(ag, l.x ? block : 0, l.y ? block : 0);
      out.push_back(make("conv2d_grad_data_" + name + suffix, OpKind::conv2d_grad_data, {y, wt, x}, {R, R, W}, ag));
      if (q.bias)
        out.push_back(make("conv2d_grad_filter_" + name + suffix, OpKind::conv2d_grad_filter, {x, y, wt, b},
                           {R, R, W, W}, ag));
      else
        out.push_back(make("conv2d_grad_filter_" + name + suffix, OpKind::conv2d_grad_filter, {x, y, wt}, {R, R, W}, ag));
    }
  }
  for (OpCaseSpec& c : out) c.infinity_may_become_nan = c.name.find("winograd") != std::string::npos;
  return out;
}

}  // namespace corun::codelets::testing
