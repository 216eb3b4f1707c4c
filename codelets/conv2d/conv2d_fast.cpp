// Fast conv2d kernels: im2col + one single-threaded OpenBLAS sgemm per image (forward, backward-data) or
// per image and filter tile (backward-filter). docs/models.md has the measurements behind this choice
// against oneDNN.
//
// Width independence by construction: forward and backward-data give each member whole images, and every
// image is the same sgemm call whoever runs it. Backward-filter gives each member whole tiles of
// kConvFilterTile output channels (a tiling that depends on K only, never on the width) and accumulates
// the images into its tile in image order, again the identical sequence of calls at every width.
//
// The column buffer is per worker thread and only grows: it is allocated during the first iterations
// (once per shape maximum), never in the steady state.
#include "codelets/conv2d/conv2d.hpp"

#include <algorithm>
#include <cblas.h>
#include <cstring>
#include <vector>

namespace corun::codelets {
namespace {

struct Geometry {
  int64_t n, c, h, w, k, r, s, oh, ow, stride, pad;
  int64_t crs() const { return c * r * s; }
  int64_t p() const { return oh * ow; }
  // A 1x1 stride-1 unpadded convolution reads the image itself as its column matrix.
  bool identity_cols() const { return r == 1 && s == 1 && stride == 1 && pad == 0; }
};

Geometry geometry(const Shape& x, const Shape& wt, const Shape& y, const OpCall& call) {
  return Geometry{x[0], x[1], x[2], x[3], wt[0], wt[2], wt[3], y[2], y[3], call.i[0], call.i[1]};
}

float* scratch(int64_t floats) {
  thread_local std::vector<float> buffer;
  if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(static_cast<size_t>(floats));
  return buffer.data();
}

// col[(c,r,s), (oh,ow)] = image[c, oh*stride - pad + r, ow*stride - pad + s], zero outside the image.
void im2col(const Geometry& g, const float* image, float* col) {
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t r = 0; r < g.r; ++r)
      for (int64_t s = 0; s < g.s; ++s) {
        float* row = col + ((c * g.r + r) * g.s + s) * g.p();
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          float* out = row + oh * g.ow;
          const int64_t ih = oh * g.stride - g.pad + r;
          if (ih < 0 || ih >= g.h) {
            std::fill_n(out, g.ow, 0.0f);
            continue;
          }
          const float* in = image + (c * g.h + ih) * g.w;
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const int64_t iw = ow * g.stride - g.pad + s;
            out[ow] = iw >= 0 && iw < g.w ? in[iw] : 0.0f;
          }
        }
      }
}

// image[c, ih, iw] += col[(c,r,s), (oh,ow)] for every tap: the adjoint of im2col (image zeroed first).
void col2im(const Geometry& g, const float* col, float* image) {
  std::fill_n(image, g.c * g.h * g.w, 0.0f);
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t r = 0; r < g.r; ++r)
      for (int64_t s = 0; s < g.s; ++s) {
        const float* row = col + ((c * g.r + r) * g.s + s) * g.p();
        for (int64_t oh = 0; oh < g.oh; ++oh) {
          const int64_t ih = oh * g.stride - g.pad + r;
          if (ih < 0 || ih >= g.h) continue;
          float* out = image + (c * g.h + ih) * g.w;
          const float* in = row + oh * g.ow;
          for (int64_t ow = 0; ow < g.ow; ++ow) {
            const int64_t iw = ow * g.stride - g.pad + s;
            if (iw >= 0 && iw < g.w) out[iw] += in[ow];
          }
        }
      }
}

blasint bi(int64_t v) { return static_cast<blasint>(v); }

}  // namespace

void conv2d_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Geometry g = geometry(call.shapes[0], call.shapes[1], call.shapes[3], call);
  const float* x = buf[0];
  const float* wt = buf[1];
  const float* b = buf[2];
  float* y = buf[3];
  const Range images = split_range(g.n, rank, width);
  if (images.size() <= 0) return;
  float* col = g.identity_cols() ? nullptr : scratch(g.crs() * g.p());
  for (int64_t n = images.begin; n < images.end; ++n) {
    const float* image = x + n * g.c * g.h * g.w;
    if (!g.identity_cols()) im2col(g, image, col);
    float* out = y + n * g.k * g.p();
    // Start from the bias and let sgemm add the product (beta = 1): one pass over Y instead of two.
    for (int64_t k = 0; k < g.k; ++k) std::fill_n(out + k * g.p(), g.p(), b[k]);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bi(g.k), bi(g.p()), bi(g.crs()), 1.0f, wt, bi(g.crs()),
                g.identity_cols() ? image : col, bi(g.p()), 1.0f, out, bi(g.p()));
  }
}

void conv2d_grad_data_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Geometry g = geometry(call.shapes[2], call.shapes[1], call.shapes[0], call);
  const float* dy = buf[0];
  const float* wt = buf[1];
  float* dx = buf[2];
  const Range images = split_range(g.n, rank, width);
  if (images.size() <= 0) return;
  float* col = g.identity_cols() ? nullptr : scratch(g.crs() * g.p());
  for (int64_t n = images.begin; n < images.end; ++n) {
    float* image = dx + n * g.c * g.h * g.w;
    // dcol[CRS, P] = W^T [CRS, K] * dY[n] [K, P], then scattered back onto the image.
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, bi(g.crs()), bi(g.p()), bi(g.k), 1.0f, wt, bi(g.crs()),
                dy + n * g.k * g.p(), bi(g.p()), 0.0f, g.identity_cols() ? image : col, bi(g.p()));
    if (!g.identity_cols()) col2im(g, col, image);
  }
}

void conv2d_grad_filter_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const Geometry g = geometry(call.shapes[0], call.shapes[2], call.shapes[1], call);
  const float* x = buf[0];
  const float* dy = buf[1];
  float* dw = buf[2];
  float* db = buf[3];
  const int64_t tiles = (g.k + kConvFilterTile - 1) / kConvFilterTile;
  const Range mine = split_range(tiles, rank, width);
  if (mine.size() <= 0) return;
  const int64_t k0 = mine.begin * kConvFilterTile;
  const int64_t k1 = std::min(g.k, mine.end * kConvFilterTile);
  float* col = g.identity_cols() ? nullptr : scratch(g.crs() * g.p());
  for (int64_t n = 0; n < g.n; ++n) {
    const float* image = x + n * g.c * g.h * g.w;
    if (!g.identity_cols()) im2col(g, image, col);
    const float* cols = g.identity_cols() ? image : col;
    const float* dyn = dy + n * g.k * g.p();
    // dW[tile] (+)= dY[n][tile rows] * col^T, one call per fixed tile.
    for (int64_t t = mine.begin; t < mine.end; ++t) {
      const int64_t first = t * kConvFilterTile;
      const int64_t rows = std::min(kConvFilterTile, g.k - first);
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bi(rows), bi(g.crs()), bi(g.p()), 1.0f,
                  dyn + first * g.p(), bi(g.p()), cols, bi(g.p()), n == 0 ? 0.0f : 1.0f, dw + first * g.crs(),
                  bi(g.crs()));
    }
  }
  for (int64_t k = k0; k < k1; ++k) {
    float sum = 0.0f;
    for (int64_t n = 0; n < g.n; ++n) {
      const float* row = dy + (n * g.k + k) * g.p();
      for (int64_t p = 0; p < g.p(); ++p) sum += row[p];
    }
    db[k] = sum;
  }
}

}  // namespace corun::codelets
