// Reference conv2d kernels: the definition as plain loops, one output element at a time, sums in double.
#include "codelets/conv2d/conv2d.hpp"

namespace corun::codelets {
namespace {

struct Geometry {
  int64_t n, c, h, w, k, r, s, oh, ow, stride, pad;
};

// X and dY shapes give every extent; W gives R and S.
Geometry geometry(const Shape& x, const Shape& wt, const Shape& y, const OpCall& call) {
  return Geometry{x[0], x[1], x[2], x[3], wt[0], wt[2], wt[3], y[2], y[3], call.i[0], call.i[1]};
}

}  // namespace

void conv2d_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Geometry g = geometry(call.shapes[0], call.shapes[1], call.shapes[3], call);
  const float* x = buf[0];
  const float* wt = buf[1];
  const float* b = buf[2];
  float* y = buf[3];
  const Range range = split_range(g.n * g.k * g.oh * g.ow, rank, width);
  for (int64_t e = range.begin; e < range.end; ++e) {
    const int64_t ow = e % g.ow, oh = e / g.ow % g.oh, k = e / (g.ow * g.oh) % g.k, n = e / (g.ow * g.oh * g.k);
    double acc = b[k];
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t s = 0; s < g.s; ++s) {
          const int64_t ih = oh * g.stride - g.pad + r, iw = ow * g.stride - g.pad + s;
          if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
          acc += static_cast<double>(wt[((k * g.c + c) * g.r + r) * g.s + s]) *
                 x[((n * g.c + c) * g.h + ih) * g.w + iw];
        }
    y[e] = static_cast<float>(acc);
  }
}

void conv2d_grad_data_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Geometry g = geometry(call.shapes[2], call.shapes[1], call.shapes[0], call);
  const float* dy = buf[0];
  const float* wt = buf[1];
  float* dx = buf[2];
  const Range range = split_range(g.n * g.c * g.h * g.w, rank, width);
  for (int64_t e = range.begin; e < range.end; ++e) {
    const int64_t iw = e % g.w, ih = e / g.w % g.h, c = e / (g.w * g.h) % g.c, n = e / (g.w * g.h * g.c);
    // Every output position whose window covers (ih, iw): oh*stride - pad + r == ih for some tap r.
    double acc = 0.0;
    for (int64_t k = 0; k < g.k; ++k)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t s = 0; s < g.s; ++s) {
          const int64_t th = ih + g.pad - r, tw = iw + g.pad - s;
          if (th < 0 || tw < 0 || th % g.stride != 0 || tw % g.stride != 0) continue;
          const int64_t oh = th / g.stride, ow = tw / g.stride;
          if (oh >= g.oh || ow >= g.ow) continue;
          acc += static_cast<double>(wt[((k * g.c + c) * g.r + r) * g.s + s]) *
                 dy[((n * g.k + k) * g.oh + oh) * g.ow + ow];
        }
    dx[e] = static_cast<float>(acc);
  }
}

void conv2d_grad_filter_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Geometry g = geometry(call.shapes[0], call.shapes[2], call.shapes[1], call);
  const float* x = buf[0];
  const float* dy = buf[1];
  float* dw = buf[2];
  float* db = buf[3];
  const Range range = split_range(g.k, rank, width);  // whole output channels: dW rows and dB entries
  for (int64_t k = range.begin; k < range.end; ++k) {
    for (int64_t c = 0; c < g.c; ++c)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t s = 0; s < g.s; ++s) {
          double acc = 0.0;
          for (int64_t n = 0; n < g.n; ++n)
            for (int64_t oh = 0; oh < g.oh; ++oh)
              for (int64_t ow = 0; ow < g.ow; ++ow) {
                const int64_t ih = oh * g.stride - g.pad + r, iw = ow * g.stride - g.pad + s;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                acc += static_cast<double>(dy[((n * g.k + k) * g.oh + oh) * g.ow + ow]) *
                       x[((n * g.c + c) * g.h + ih) * g.w + iw];
              }
          dw[((k * g.c + c) * g.r + r) * g.s + s] = static_cast<float>(acc);
        }
    double bias = 0.0;
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t p = 0; p < g.oh * g.ow; ++p) bias += dy[(n * g.k + k) * g.oh * g.ow + p];
    db[k] = static_cast<float>(bias);
  }
}

}  // namespace corun::codelets
