// Conv, ConvTranspose, MaxPool and AveragePool converters on ModelProtos written in C++ (no torch): the
// general attribute forms (per-axis strides and dilations, asymmetric pads, groups, auto_pad, output_shape,
// ceil_mode, count_include_pad) against the ONNX definitions computed here, and the refusals.
#include "onnx_test_helpers.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace corun {
namespace {

using testing::error_of;
using testing::import;
using testing::OnnxModelBuilder;
using testing::run;

using Dims = std::array<int64_t, 4>;
struct Win {
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, top = 0, left = 0, bottom = 0, right = 0, groups = 1;
};

std::vector<float> ramp(int64_t n, int64_t mod, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>((i * 7) % mod - mod / 2) * scale;
  return v;
}

// ONNX Conv: y[n,k,oy,ox] = b[k] + sum over the group's channels and the kernel of x at the dilated,
// strided, padded position (zero outside).
std::vector<float> conv_ref(const std::vector<float>& x, Dims xd, const std::vector<float>& w, Dims wd,
                            const std::vector<float>& b, const Win& p, Dims& yd) {
  const int64_t oh = (xd[2] + p.top + p.bottom - p.dh * (wd[2] - 1) - 1) / p.sh + 1;
  const int64_t ow = (xd[3] + p.left + p.right - p.dw * (wd[3] - 1) - 1) / p.sw + 1;
  yd = {xd[0], wd[0], oh, ow};
  std::vector<float> y(static_cast<size_t>(yd[0] * yd[1] * oh * ow));
  const int64_t per_group = wd[0] / p.groups;
  for (int64_t n = 0; n < xd[0]; ++n)
    for (int64_t k = 0; k < wd[0]; ++k)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double s = b.empty() ? 0.0 : b[static_cast<size_t>(k)];
          for (int64_t c = 0; c < wd[1]; ++c)
            for (int64_t r = 0; r < wd[2]; ++r)
              for (int64_t q = 0; q < wd[3]; ++q) {
                const int64_t iy = oy * p.sh - p.top + r * p.dh, ix = ox * p.sw - p.left + q * p.dw;
                if (iy < 0 || iy >= xd[2] || ix < 0 || ix >= xd[3]) continue;
                const int64_t ci = (k / per_group) * wd[1] + c;
                s += x[static_cast<size_t>(((n * xd[1] + ci) * xd[2] + iy) * xd[3] + ix)] *
                     w[static_cast<size_t>(((k * wd[1] + c) * wd[2] + r) * wd[3] + q)];
              }
          y[static_cast<size_t>(((n * yd[1] + k) * oh + oy) * ow + ox)] = static_cast<float>(s);
        }
  return y;
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << "at " << i;
}

TEST(OnnxConv, GroupsDilationsPerAxisStridesAndAsymmetricPadsWithoutBias) {
  const Dims xd{1, 4, 5, 6}, wd{4, 2, 3, 2};
  OnnxModelBuilder b;
  b.input("x", {1, 4, 5, 6});
  const std::vector<float> w = ramp(48, 11, 0.25f);
  b.init("w", {4, 2, 3, 2}, w);
  auto* n = b.node("Conv", {"x", "w"}, {"y"});
  OnnxModelBuilder::attr(n, "group", int64_t{2});
  OnnxModelBuilder::attr(n, "strides", std::vector<int64_t>{2, 1});
  OnnxModelBuilder::attr(n, "dilations", std::vector<int64_t>{1, 2});
  OnnxModelBuilder::attr(n, "pads", std::vector<int64_t>{1, 0, 0, 2});
  b.output("y");
  OnnxModel m = import(b);
  const std::vector<float> x = ramp(120, 13, 0.5f);
  Win p;
  p.sh = 2, p.dw = 2, p.top = 1, p.right = 2, p.groups = 2;
  Dims yd{};
  const std::vector<float> want = conv_ref(x, xd, w, wd, {}, p, yd);
  EXPECT_EQ(m.graph.find("y").shape().str(), Shape({yd[0], yd[1], yd[2], yd[3]}).str());
  expect_near_all(run(m, x, "y"), want);
}

TEST(OnnxConv, SameUpperPutsTheOddPadAtTheEndAndSameLowerAtTheStart) {
  const Dims xd{1, 1, 5, 5}, wd{2, 1, 2, 2};
  const std::vector<float> x = ramp(25, 9, 1.0f), w = ramp(8, 5, 0.5f), bias = {0.5f, -1.0f};
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    OnnxModelBuilder b;
    b.input("x", {1, 1, 5, 5});
    b.init("w", {2, 1, 2, 2}, w);
    b.init("b", {2}, bias);
    auto* n = b.node("Conv", {"x", "w", "b"}, {"y"});
    OnnxModelBuilder::attr(n, "auto_pad", std::string(mode));
    OnnxModelBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
    b.output("y");
    OnnxModel m = import(b);
    // out = ceil(5 / 2) = 3; total pad = (3 - 1) 2 + 2 - 5 = 1 per axis.
    Win p;
    p.sh = p.sw = 2;
    (std::string(mode) == "SAME_UPPER" ? p.bottom : p.top) = 1;
    (std::string(mode) == "SAME_UPPER" ? p.right : p.left) = 1;
    Dims yd{};
    const std::vector<float> want = conv_ref(x, xd, w, wd, bias, p, yd);
    EXPECT_EQ(yd[2], 3);
    expect_near_all(run(m, x, "y"), want);
  }
}

TEST(OnnxConv, MismatchedGroupIsRefusedNamingTheChannels) {
  OnnxModelBuilder b;
  b.input("x", {1, 4, 3, 3});
  b.init("w", {2, 4, 1, 1}, std::vector<float>(8, 1.0f));
  auto* n = b.node("Conv", {"x", "w"}, {"y"});
  OnnxModelBuilder::attr(n, "group", int64_t{2});
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("input channels 4"), std::string::npos) << e;
  EXPECT_NE(e.find("group"), std::string::npos) << e;
}

// ONNX ConvTranspose: every x[n,c,iy,ix] w[c,k,r,q] lands at (iy s - top + r d, ix s - left + q d).
std::vector<float> conv_transpose_ref(const std::vector<float>& x, Dims xd, const std::vector<float>& w, Dims wd,
                                      const Win& p, int64_t oh, int64_t ow) {
  std::vector<float> y(static_cast<size_t>(xd[0] * wd[1] * oh * ow), 0.0f);
  for (int64_t n = 0; n < xd[0]; ++n)
    for (int64_t c = 0; c < xd[1]; ++c)
      for (int64_t iy = 0; iy < xd[2]; ++iy)
        for (int64_t ix = 0; ix < xd[3]; ++ix)
          for (int64_t k = 0; k < wd[1]; ++k)
            for (int64_t r = 0; r < wd[2]; ++r)
              for (int64_t q = 0; q < wd[3]; ++q) {
                const int64_t oy = iy * p.sh - p.top + r * p.dh, ox = ix * p.sw - p.left + q * p.dw;
                if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
                y[static_cast<size_t>(((n * wd[1] + k) * oh + oy) * ow + ox)] +=
                    x[static_cast<size_t>(((n * xd[1] + c) * xd[2] + iy) * xd[3] + ix)] *
                    w[static_cast<size_t>(((c * wd[1] + k) * wd[2] + r) * wd[3] + q)];
              }
  return y;
}

TEST(OnnxConvTranspose, PadsAndOutputPaddingOrTheSameOutputShapeGiveOneResult) {
  const Dims xd{1, 2, 3, 3}, wd{2, 3, 3, 3};
  const std::vector<float> x = ramp(18, 7, 1.0f), w = ramp(54, 11, 0.25f);
  // (3 - 1) 2 - 1 - 0 + 3 + 1 = 7 rows and columns: pads (1, 1, 0, 0), output_padding 1.
  Win p;
  p.sh = p.sw = 2, p.top = p.left = 1;
  const std::vector<float> want = conv_transpose_ref(x, xd, w, wd, p, 7, 7);
  for (bool by_shape : {false, true}) {
    OnnxModelBuilder b;
    b.input("x", {1, 2, 3, 3});
    b.init("w", {2, 3, 3, 3}, w);
    auto* n = b.node("ConvTranspose", {"x", "w"}, {"y"});
    OnnxModelBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
    OnnxModelBuilder::attr(n, "output_padding", std::vector<int64_t>{1, 1});
    if (by_shape) {
      // total padding 2 (3 - 1) + 1 + 3 - 7 = 1: NOTSET puts the odd pixel at the start, as pads above.
      OnnxModelBuilder::attr(n, "output_shape", std::vector<int64_t>{7, 7});
    } else {
      OnnxModelBuilder::attr(n, "pads", std::vector<int64_t>{1, 1, 0, 0});
    }
    b.output("y");
    OnnxModel m = import(b);
    EXPECT_EQ(m.graph.find("y").shape().str(), Shape({1, 3, 7, 7}).str());
    expect_near_all(run(m, x, "y"), want);
  }
}

TEST(OnnxConvTranspose, AnOutputShapeBeyondWhatOutputPaddingGivesIsRefused) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 3, 3});
  b.init("w", {1, 1, 3, 3}, std::vector<float>(9, 1.0f));
  auto* n = b.node("ConvTranspose", {"x", "w"}, {"y"});
  OnnxModelBuilder::attr(n, "strides", std::vector<int64_t>{2, 2});
  OnnxModelBuilder::attr(n, "output_shape", std::vector<int64_t>{9, 9});
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("output_shape"), std::string::npos) << e;
  EXPECT_NE(e.find("output_padding"), std::string::npos) << e;
}

// ONNX pooling over [1, 1, H, W]: max ignores the padding; average divides by the positions inside the
// input, or by the whole window clipped to the padded input when count_include_pad.
std::vector<float> pool_ref(const std::vector<float>& x, int64_t h, int64_t w, int64_t kh, int64_t kw, const Win& p,
                            bool ceil_mode, bool max, bool include_pad, int64_t& oh, int64_t& ow) {
  auto out_size = [&](int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pe) {
    const int64_t span = in + pb + pe - k;
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + pb) --o;
    return o;
  };
  oh = out_size(h, kh, p.sh, p.top, p.bottom);
  ow = out_size(w, kw, p.sw, p.left, p.right);
  std::vector<float> y;
  for (int64_t oy = 0; oy < oh; ++oy)
    for (int64_t ox = 0; ox < ow; ++ox) {
      double best = -std::numeric_limits<double>::infinity(), sum = 0;
      int64_t inside = 0, padded = 0;
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t q = 0; q < kw; ++q) {
          const int64_t iy = oy * p.sh - p.top + r, ix = ox * p.sw - p.left + q;
          if (iy < h + p.bottom && ix < w + p.right) ++padded;
          if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
          const double v = x[static_cast<size_t>(iy * w + ix)];
          best = std::max(best, v);
          sum += v;
          ++inside;
        }
      y.push_back(static_cast<float>(max ? best : sum / static_cast<double>(include_pad ? padded : inside)));
    }
  return y;
}

OnnxModelBuilder pool_model(const char* op, int64_t ceil_mode, int64_t include_pad) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 6, 7});
  auto* n = b.node(op, {"x"}, {"y"});
  OnnxModelBuilder::attr(n, "kernel_shape", std::vector<int64_t>{3, 2});
  OnnxModelBuilder::attr(n, "strides", std::vector<int64_t>{2, 3});
  OnnxModelBuilder::attr(n, "pads", std::vector<int64_t>{1, 0, 1, 1});
  OnnxModelBuilder::attr(n, "ceil_mode", ceil_mode);
  if (std::string(op) == "AveragePool") OnnxModelBuilder::attr(n, "count_include_pad", include_pad);
  b.output("y");
  return b;
}

TEST(OnnxPool, PerAxisWindowsAsymmetricPadsCeilModeAndCountIncludePad) {
  const std::vector<float> x = ramp(42, 17, 0.5f);
  Win p;
  p.sh = 2, p.sw = 3, p.top = 1, p.bottom = 1, p.right = 1;
  for (const char* op : {"MaxPool", "AveragePool"})
    for (int64_t ceil_mode : {0, 1})
      for (int64_t include_pad : {0, 1}) {
        SCOPED_TRACE(std::string(op) + " ceil_mode " + std::to_string(ceil_mode) + " count_include_pad " +
                     std::to_string(include_pad));
        OnnxModel m = import(pool_model(op, ceil_mode, include_pad));
        int64_t oh = 0, ow = 0;
        const std::vector<float> want =
            pool_ref(x, 6, 7, 3, 2, p, ceil_mode == 1, std::string(op) == "MaxPool", include_pad == 1, oh, ow);
        EXPECT_EQ(m.graph.find("y").shape().str(), Shape({1, 1, oh, ow}).str());
        expect_near_all(run(m, x, "y"), want);
      }
}

// PyTorch's AvgPool2d(3, 1, padding=1) (count_include_pad, Inception-v3's branch pools) is exported as a zero Pad
// and an unpadded AveragePool: imported as one padded average pool (onnx/pad_pool_pattern.hpp), with the bits of
// the two converted as they stand. A Pad whose output something else reads too stays a Pad.
OnnxModelBuilder pad_pool_model(bool pad_is_an_output, float pad_value) {
  OnnxModelBuilder b;
  b.input("x", {2, 3, 6, 5});
  b.init_ints("pads", {0, 0, 1, 2, 0, 0, 1, 1});  // H: 1 above, 1 below; W: 2 left, 1 right
  b.init("value", {}, {pad_value});
  b.node("Pad", {"x", "pads", "value"}, {"p"});
  auto* n = b.node("AveragePool", {"p"}, {"y"});
  OnnxModelBuilder::attr(n, "kernel_shape", std::vector<int64_t>{3, 3});
  b.output("y");
  if (pad_is_an_output) b.output("p");
  return b;
}

TEST(OnnxPool, AZeroPadBeforeAnAveragePoolFoldsIntoItsPads) {
  const std::vector<float> x = ramp(2 * 3 * 6 * 5, 23, 0.37f);
  OnnxModel folded = import(pad_pool_model(false, 0.0f)), kept = import(pad_pool_model(true, 0.0f));
  EXPECT_EQ(folded.graph.num_nodes(), 1);  // the pool alone
  EXPECT_GT(kept.graph.num_nodes(), 1);    // the Pad's bands and concatenations, then the pool
  ASSERT_EQ(folded.graph.find("y").shape(), (Shape{2, 3, 6, 6}));
  const std::vector<float> a = run(folded, x, "y"), b = run(kept, x, "y");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "output " << i;  // bitwise
  // Against the definition: each plane padded with zeros, then 3x3 means (every window inside the padded image).
  Win p;
  p.top = 1, p.left = 2, p.bottom = 1, p.right = 1;
  for (int64_t plane = 0; plane < 6; ++plane) {
    const std::vector<float> xp(x.begin() + plane * 30, x.begin() + plane * 30 + 30);
    int64_t oh = 0, ow = 0;
    const std::vector<float> want = pool_ref(xp, 6, 5, 3, 3, p, false, false, true, oh, ow);
    expect_near_all(std::vector<float>(a.begin() + plane * 36, a.begin() + plane * 36 + 36), want);
  }
  // A non-zero pad value is not a count_include_pad pool: converted as it stands.
  EXPECT_GT(import(pad_pool_model(false, 0.5f)).graph.num_nodes(), 1);
}

TEST(OnnxPool, DilatedPoolingIsRefusedNamingTheAttribute) {
  OnnxModelBuilder b;
  b.input("x", {1, 1, 6, 6});
  auto* n = b.node("MaxPool", {"x"}, {"y"});
  OnnxModelBuilder::attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxModelBuilder::attr(n, "dilations", std::vector<int64_t>{2, 2});
  b.output("y");
  const std::string e = error_of([&] { import(b); });
  EXPECT_NE(e.find("dilations"), std::string::npos) << e;
}

}  // namespace
}  // namespace corun
