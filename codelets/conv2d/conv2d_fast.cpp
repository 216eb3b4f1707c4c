// Fast conv2d kernels: im2col + one single-threaded OpenBLAS sgemm per image and group (forward,
// backward-data) or per image and filter tile (backward-filter; tiles never straddle groups). A convolution
// with one input channel per group (depthwise) runs direct loops instead, in all three passes.
// docs/models.md has the measurements behind these choices against oneDNN.
//
// Width independence by construction: forward and backward-data give each member whole images, and every
// image is the same sgemm call whoever runs it. Backward-filter gives each member whole tiles of
// kConvFilterTile output channels (a tiling that depends on K only, never on the width) and accumulates
// the images into its tile in image order, again the identical sequence of calls at every width.
//
// Where the implementation list (conv_impls.hpp) picks oneDNN for a call, the three convolution passes run the
// oneDNN kernels instead (conv2d_dnnl.cpp); conv_transpose2d always runs the kernels below.
//
// The column buffer is per worker thread and only grows: it is allocated during the first iterations
// (once per shape maximum), never in the steady state.
#include "codelets/conv2d/conv2d.hpp"
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/conv2d/conv_layout.hpp"

#include <algorithm>
#include <cblas.h>
#include <cstring>
#include <vector>

namespace corun::codelets {
namespace {

float* scratch(int64_t floats) {
  thread_local std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(static_cast<size_t>(floats));
  return buffer.data();
}

// col[(c,r,s), (oh,ow)] = image[c, oh*sh - pt + r*dh, ow*sw - pl + s*dw], zero outside the image, for the
// cg channels of one group (`image` points at the group's first channel).
void im2col(const ConvGeometry& g, const float* image, float* col) {
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t r = 0; r < g.r; ++r)
      for (int64_t s = 0; s < g.s; ++s) {
        float* row = col + ((c * g.r + r) * g.s + s) * g.p();
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          float* out = row + oh * g.ow;
          const int64_t ih = oh * g.sh - g.pt + r * g.dh;
          if (ih < 0 || ih >= g.h) {
            std::fill_n(out, g.ow, 0.0f);
            continue;
          }
          const float* in = image + (c * g.h + ih) * g.w;
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const int64_t iw = ow * g.sw - g.pl + s * g.dw;
            out[ow] = iw >= 0 && iw < g.w ? in[iw] : 0.0f;
          }
        }
      }
}

// image[c, ih, iw] += col[(c,r,s), (oh,ow)] for every tap: the adjoint of im2col (the group's channels of
// the image zeroed first).
void col2im(const ConvGeometry& g, const float* col, float* image) {
  std::fill_n(image, g.cg() * g.h * g.w, 0.0f);
  for (int64_t c = 0; c < g.cg(); ++c)
    for (int64_t r = 0; r < g.r; ++r)
      for (int64_t s = 0; s < g.s; ++s) {
        const float* row = col + ((c * g.r + r) * g.s + s) * g.p();
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          const int64_t ih = oh * g.sh - g.pt + r * g.dh;
          if (ih < 0 || ih >= g.h) continue;
          float* out = image + (c * g.h + ih) * g.w;
          const float* in = row + oh * g.ow;
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const int64_t iw = ow * g.sw - g.pl + s * g.dw;
            if (iw >= 0 && iw < g.w) out[iw] += in[ow];
          }
        }
      }
}

blasint bi(int64_t v) { return static_cast<blasint>(v); }

// The output columns [lo, hi) whose tap at column offset `off` (s * dilation - pad) lands inside the
// image of width `w`: 0 <= ow * stride + off < w.
void valid_columns(int64_t off, int64_t stride, int64_t w, int64_t ow, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  hi = w - off <= 0 ? 0 : std::min(ow, (w - off - 1) / stride + 1);
}

// A convolution with one input channel per group (depthwise, with any channel multiplier) computed
// directly: im2col would copy each plane R*S times to feed an sgemm with one or two rows. Output rows start
// from the bias and add the taps in (r, s) order.
void depthwise_image(const ConvGeometry& g, const float* image, const float* wt, const float* b, float* out) {
  for (int64_t k = 0; k < g.k; ++k) {
    const float* plane = image + k / g.kg() * g.h * g.w;
    const float* taps = wt + k * g.r * g.s;
    float* y = out + k * g.p();
    std::fill_n(y, g.p(), b ? b[k] : 0.0f);
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      float* row = y + oh * g.ow;
      for (int64_t r = 0; r < g.r; ++r) {
        const int64_t ih = oh * g.sh - g.pt + r * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        const float* in = plane + ih * g.w;
        for (int64_t s = 0; s < g.s; ++s) {
          const float tap = taps[r * g.s + s];
          const int64_t off = s * g.dw - g.pl;
          int64_t lo, hi;
          valid_columns(off, g.sw, g.w, g.ow, lo, hi);
          for (int64_t ow = lo; ow < hi; ++ow) row[ow] += tap * in[ow * g.sw + off];
        }
      }
    }
  }
}

// dX of one image of a depthwise convolution: the adjoint of depthwise_image. Every output channel k adds
// its taps onto its input plane k / kg, in (k, oh, r, s, ow) order.
void depthwise_grad_data_image(const ConvGeometry& g, const float* dy, const float* wt, float* dx) {
  std::fill_n(dx, g.c * g.h * g.w, 0.0f);
  for (int64_t k = 0; k < g.k; ++k) {
    float* plane = dx + k / g.kg() * g.h * g.w;
    const float* taps = wt + k * g.r * g.s;
    const float* grad = dy + k * g.p();
    for (int64_t oh = 0; oh < g.oh; ++oh) {
      const float* row = grad + oh * g.ow;
      for (int64_t r = 0; r < g.r; ++r) {
        const int64_t ih = oh * g.sh - g.pt + r * g.dh;
        if (ih < 0 || ih >= g.h) continue;
        float* in = plane + ih * g.w;
        for (int64_t s = 0; s < g.s; ++s) {
          const float tap = taps[r * g.s + s];
          const int64_t off = s * g.dw - g.pl;
          int64_t lo, hi;
          valid_columns(off, g.sw, g.w, g.ow, lo, hi);
          for (int64_t ow = lo; ow < hi; ++ow) in[ow * g.sw + off] += tap * row[ow];
        }
      }
    }
  }
}

// dW[k] of a depthwise convolution for output channels [k0, k1): tap (r, s) is the sum over images, rows
// and columns of dY[n,k] times the input it saw. Each tap sums into kLanes partial sums (column j goes to
// lane j mod kLanes from the row's first valid column), added in lane order at the end: the compiler can
// vectorise the columns without reassociating, and the order depends on the shapes only, never the width.
void depthwise_grad_filter(const ConvGeometry& g, const float* x, const float* dy, float* dw, int64_t k0,
                           int64_t k1) {
  constexpr int64_t kLanes = 8;
  const int64_t taps = g.r * g.s;
  float* lanes = scratch(taps * kLanes);
  for (int64_t k = k0; k < k1; ++k) {
    std::fill_n(lanes, taps * kLanes, 0.0f);
    for (int64_t n = 0; n < g.n; ++n) {
      const float* plane = x + (n * g.c + k / g.kg()) * g.h * g.w;  // stays in cache over the R*S taps
      const float* grad = dy + (n * g.k + k) * g.p();
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t s = 0; s < g.s; ++s) {
          float* lane = lanes + (r * g.s + s) * kLanes;
          const int64_t off = s * g.dw - g.pl;
          int64_t lo, hi;
          valid_columns(off, g.sw, g.w, g.ow, lo, hi);
          for (int64_t oh = 0; oh < g.oh; ++oh) {
            const int64_t ih = oh * g.sh - g.pt + r * g.dh;
            if (ih < 0 || ih >= g.h) continue;
            const float* in = plane + ih * g.w + off;
            const float* row = grad + oh * g.ow;
            int64_t ow = lo;
            for (; ow + kLanes <= hi; ow += kLanes)
              for (int64_t j = 0; j < kLanes; ++j) lane[j] += row[ow + j] * in[(ow + j) * g.sw];
            for (int64_t j = 0; ow < hi; ++ow, ++j) lane[j] += row[ow] * in[ow * g.sw];
          }
        }
    }
    for (int64_t t = 0; t < taps; ++t) {
      float sum = 0.0f;
      for (int64_t j = 0; j < kLanes; ++j) sum += lanes[t * kLanes + j];
      dw[k * taps + t] = sum;
    }
  }
}

// bias[c] added to every element of `channels` planes of `plane` floats each.
void add_channel_bias(float* planes, const float* bias, int64_t channels, int64_t plane) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t e = 0; e < plane; ++e) planes[c * plane + e] += bias[c];
}

// dX of whole images (the transposed convolution's Y), plus bias[c] on every channel when there is one.
void grad_data(const ConvGeometry& g, const float* dy, const float* wt, const float* bias, float* dx, int rank,
               int width) {
  const Range images = split_range(g.n, rank, width);
  if (images.size() <= 0) return;
  if (direct_depthwise(g)) {
    for (int64_t n = images.begin; n < images.end; ++n) {
      float* image = dx + n * g.c * g.h * g.w;
      depthwise_grad_data_image(g, dy + n * g.k * g.p(), wt, image);
      if (bias) add_channel_bias(image, bias, g.c, g.h * g.w);
    }
    return;
  }
  const bool identity = identity_cols(g);
  float* col = identity ? nullptr : scratch(g.crs() * g.p());
  for (int64_t n = images.begin; n < images.end; ++n)
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      float* image = dx + (n * g.c + gi * g.cg()) * g.h * g.w;
      // dcol[CRS, P] = W_g^T [CRS, Kg] * dY[n, group] [Kg, P], then scattered back onto the image.
      cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, bi(g.crs()), bi(g.p()), bi(g.kg()), 1.0f,
                  wt + gi * g.kg() * g.crs(), bi(g.crs()), dy + (n * g.k + gi * g.kg()) * g.p(), bi(g.p()), 0.0f,
                  identity ? image : col, bi(g.p()));
      if (!identity) col2im(g, col, image);
      if (bias) add_channel_bias(image, bias + gi * g.cg(), g.cg(), g.h * g.w);
    }
}

}  // namespace

void conv2d_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const bool has_bias = call.nbuffers() == 4;
  const ConvGeometry g = ConvGeometry::of(call, call.shapes[0], call.shapes[1], call.shapes[has_bias ? 3 : 2]);
  const float* x = buf[0];
  const float* wt = buf[1];
  const float* b = has_bias ? buf[2] : nullptr;
  float* y = buf[has_bias ? 3 : 2];
  if (is_onednn(conv_impl_of(call))) return conv2d_dnnl(call, buf, rank, width);  // takes every layout
  // Blocked X or Y (Graph::block_layouts) on a path that only knows NCHW: on plain copies of the member's images.
  if (ConvLayouts::of(call).any()) return conv2d_via_plain(&conv2d_fast, call, buf, rank, width);
  const Range images = split_range(g.n, rank, width);
  if (images.size() <= 0) return;
  // A fused activation (Graph::fuse_conv_activation) runs over each image's output right after it is written.
  const ConvEpilogue act = ConvEpilogue::of(call);
  if (direct_depthwise(g)) {
    for (int64_t n = images.begin; n < images.end; ++n) {
      depthwise_image(g, x + n * g.c * g.h * g.w, wt, b, y + n * g.k * g.p());
      act.apply(y, g.k, g.p(), n, 1, 0, g.k);
    }
    return;
  }
  const bool identity = identity_cols(g);
  float* col = identity ? nullptr : scratch(g.crs() * g.p());
  for (int64_t n = images.begin; n < images.end; ++n) {
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      const float* image = x + (n * g.c + gi * g.cg()) * g.h * g.w;
      if (!identity) im2col(g, image, col);
      float* out = y + (n * g.k + gi * g.kg()) * g.p();
      // Start from the bias and let sgemm add the product (beta = 1): one pass over Y instead of two.
      if (b)
        for (int64_t k = 0; k < g.kg(); ++k) std::fill_n(out + k * g.p(), g.p(), b[gi * g.kg() + k]);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bi(g.kg()), bi(g.p()), bi(g.crs()), 1.0f,
                  wt + gi * g.kg() * g.crs(), bi(g.crs()), identity ? image : col, bi(g.p()), b ? 1.0f : 0.0f, out,
                  bi(g.p()));
    }
    act.apply(y, g.k, g.p(), n, 1, 0, g.k);
  }
}

void conv2d_grad_data_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const ConvGeometry g = ConvGeometry::of(call, call.shapes[2], call.shapes[1], call.shapes[0]);
  if (is_onednn(conv_impl_of(call))) return conv2d_grad_data_dnnl(call, buf, rank, width);
  if (ConvLayouts::of(call).any()) return conv2d_via_plain(&conv2d_grad_data_fast, call, buf, rank, width);
  grad_data(g, buf[0], buf[1], nullptr, buf[2], rank, width);
}

void conv_transpose2d_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int out = call.nbuffers() - 1;
  grad_data(ConvGeometry::of(call, call.shapes[static_cast<size_t>(out)], call.shapes[1], call.shapes[0]), buf[0],
            buf[1], out == 3 ? buf[2] : nullptr, buf[out], rank, width);
}

void conv2d_grad_filter_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const ConvGeometry g = ConvGeometry::of(call, call.shapes[0], call.shapes[2], call.shapes[1]);
  const float* x = buf[0];
  const float* dy = buf[1];
  float* dw = buf[2];
  float* db = call.nbuffers() == 4 ? buf[3] : nullptr;
  if (is_onednn(conv_impl_of(call))) return conv2d_grad_filter_dnnl(call, buf, rank, width);
  if (ConvLayouts::of(call).any())
    return conv2d_grad_filter_via_plain(&conv2d_grad_filter_fast, call, buf, rank, width);
  // Units: group-major filter tiles, kConvFilterTile output channels each, none straddling two groups.
  const int64_t per_group = (g.kg() + kConvFilterTile - 1) / kConvFilterTile;
  const Range mine = split_range(g.groups * per_group, rank, width);
  if (mine.size() <= 0) return;
  const auto first_channel = [&](int64_t t) { return t / per_group * g.kg() + t % per_group * kConvFilterTile; };
  const auto tile_rows = [&](int64_t t) { return std::min(kConvFilterTile, g.kg() - t % per_group * kConvFilterTile); };
  if (direct_depthwise(g)) {
    depthwise_grad_filter(g, x, dy, dw, first_channel(mine.begin), first_channel(mine.end - 1) + tile_rows(mine.end - 1));
  } else {
    const bool identity = identity_cols(g);
    float* col = identity ? nullptr : scratch(g.crs() * g.p());
    const int64_t g0 = mine.begin / per_group, g1 = (mine.end - 1) / per_group + 1;  // groups with my tiles
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t gi = g0; gi < g1; ++gi) {
        const float* image = x + (n * g.c + gi * g.cg()) * g.h * g.w;
        if (!identity) im2col(g, image, col);
        const float* cols = identity ? image : col;
        const float* dyn = dy + n * g.k * g.p();
        // dW[tile] (+)= dY[n][tile rows] * col^T, one call per fixed tile.
        for (int64_t t = std::max(mine.begin, gi * per_group); t < std::min(mine.end, (gi + 1) * per_group); ++t) {
          const int64_t first = first_channel(t);
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bi(tile_rows(t)), bi(g.crs()), bi(g.p()), 1.0f,
                      dyn + first * g.p(), bi(g.p()), cols, bi(g.p()), n == 0 ? 0.0f : 1.0f, dw + first * g.crs(),
                      bi(g.crs()));
        }
      }
  }
  if (!db) return;
  for (int64_t t = mine.begin; t < mine.end; ++t)
    for (int64_t k = first_channel(t); k < first_channel(t) + tile_rows(t); ++k) {
      float sum = 0.0f;
      for (int64_t n = 0; n < g.n; ++n) {
        const float* row = dy + (n * g.k + k) * g.p();
        for (int64_t p = 0; p < g.p(); ++p) sum += row[p];
      }
      db[k] = sum;
    }
}

void conv_transpose2d_grad_bias_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& s = call.shapes[0];
  const int64_t plane = s[2] * s[3];
  const Range range = split_range(s[1], rank, width);
  for (int64_t c = range.begin; c < range.end; ++c) {
    float sum = 0.0f;
    for (int64_t n = 0; n < s[0]; ++n) {
      const float* row = buf[0] + (n * s[1] + c) * plane;
      for (int64_t p = 0; p < plane; ++p) sum += row[p];
    }
    buf[1][c] = sum;
  }
}

}  // namespace corun::codelets
