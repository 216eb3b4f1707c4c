// Reference conv2d kernels: the definition as plain loops, one output element at a time, sums in double.
#include "codelets/conv2d/conv2d.hpp"
#include "codelets/conv2d/conv_layout.hpp"

namespace corun::codelets {
namespace {

// dX (or the transposed convolution's Y) element by element, starting from bias[c] when there is one.
void grad_data(const ConvGeometry& g, const float* dy, const float* wt, const float* bias, float* dx, int rank,
               int width) {
  const Range range = split_range(g.n * g.c * g.h * g.w, rank, width);
  for (int64_t e = range.begin; e < range.end; ++e) {
    const int64_t iw = e % g.w, ih = e / g.w % g.h, c = e / (g.w * g.h) % g.c, n = e / (g.w * g.h * g.c);
    const int64_t group = c / g.cg(), cl = c % g.cg();
    // Every output position whose window covers (ih, iw): oh*sh - pt + r*dh == ih for some tap r.
    double acc = bias ? bias[c] : 0.0;
    for (int64_t k = group * g.kg(); k < (group + 1) * g.kg(); ++k)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t s = 0; s < g.s; ++s) {
          const int64_t th = ih + g.pt - r * g.dh, tw = iw + g.pl - s * g.dw;
          if (th < 0 || tw < 0 || th % g.sh != 0 || tw % g.sw != 0) continue;
          const int64_t oh = th / g.sh, ow = tw / g.sw;
          if (oh >= g.oh || ow >= g.ow) continue;
          acc += static_cast<double>(wt[((k * g.cg() + cl) * g.r + r) * g.s + s]) *
                 dy[((n * g.k + k) * g.oh + oh) * g.ow + ow];
        }
    dx[e] = static_cast<float>(acc);
  }
}

}  // namespace

void conv2d_ref(const OpCall& call, float* const* buf, int rank, int width) {
  if (ConvLayouts::of(call).any()) return conv2d_via_plain(&conv2d_ref, call, buf, rank, width);
  const bool has_bias = call.nbuffers() == 4;
  const ConvGeometry g = ConvGeometry::of(call, call.shapes[0], call.shapes[1], call.shapes[has_bias ? 3 : 2]);
  const float* x = buf[0];
  const float* wt = buf[1];
  const float* b = has_bias ? buf[2] : nullptr;
  float* y = buf[has_bias ? 3 : 2];
  const ConvEpilogue act = ConvEpilogue::of(call);
  const Range range = split_range(g.n * g.k * g.oh * g.ow, rank, width);
  for (int64_t e = range.begin; e < range.end; ++e) {
    const int64_t ow = e % g.ow, oh = e / g.ow % g.oh, k = e / (g.ow * g.oh) % g.k, n = e / (g.ow * g.oh * g.k);
    const int64_t c0 = k / g.kg() * g.cg();  // the group's first input channel
    double acc = b ? b[k] : 0.0;
    for (int64_t c = 0; c < g.cg(); ++c)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t s = 0; s < g.s; ++s) {
          const int64_t ih = oh * g.sh - g.pt + r * g.dh, iw = ow * g.sw - g.pl + s * g.dw;
          if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
          acc += static_cast<double>(wt[((k * g.cg() + c) * g.r + r) * g.s + s]) *
                 x[((n * g.c + c0 + c) * g.h + ih) * g.w + iw];
        }
    y[e] = static_cast<float>(acc);
    act.apply(y + e, 1, true);
  }
}

void conv2d_grad_data_ref(const OpCall& call, float* const* buf, int rank, int width) {
  if (ConvLayouts::of(call).any()) return conv2d_via_plain(&conv2d_grad_data_ref, call, buf, rank, width);
  grad_data(ConvGeometry::of(call, call.shapes[2], call.shapes[1], call.shapes[0]), buf[0], buf[1], nullptr, buf[2],
            rank, width);
}

void conv_transpose2d_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int out = call.nbuffers() - 1;
  grad_data(ConvGeometry::of(call, call.shapes[static_cast<size_t>(out)], call.shapes[1], call.shapes[0]), buf[0],
            buf[1], out == 3 ? buf[2] : nullptr, buf[out], rank, width);
}

void conv2d_grad_filter_ref(const OpCall& call, float* const* buf, int rank, int width) {
  if (ConvLayouts::of(call).any()) return conv2d_grad_filter_via_plain(&conv2d_grad_filter_ref, call, buf, rank, width);
  const ConvGeometry g = ConvGeometry::of(call, call.shapes[0], call.shapes[2], call.shapes[1]);
  const float* x = buf[0];
  const float* dy = buf[1];
  float* dw = buf[2];
  float* db = call.nbuffers() == 4 ? buf[3] : nullptr;
  const Range range = split_range(g.k, rank, width);  // whole output channels: dW rows and dB entries
  for (int64_t k = range.begin; k < range.end; ++k) {
    const int64_t c0 = k / g.kg() * g.cg();
    for (int64_t c = 0; c < g.cg(); ++c)
      for (int64_t r = 0; r < g.r; ++r)
        for (int64_t s = 0; s < g.s; ++s) {
          double acc = 0.0;
          for (int64_t n = 0; n < g.n; ++n)
            for (int64_t oh = 0; oh < g.oh; ++oh)
              for (int64_t ow = 0; ow < g.ow; ++ow) {
                const int64_t ih = oh * g.sh - g.pt + r * g.dh, iw = ow * g.sw - g.pl + s * g.dw;
                if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w) continue;
                acc += static_cast<double>(dy[((n * g.k + k) * g.oh + oh) * g.ow + ow]) *
                       x[((n * g.c + c0 + c) * g.h + ih) * g.w + iw];
              }
          dw[((k * g.cg() + c) * g.r + r) * g.s + s] = static_cast<float>(acc);
        }
    if (!db) continue;
    double bias = 0.0;
    for (int64_t n = 0; n < g.n; ++n)
      for (int64_t p = 0; p < g.oh * g.ow; ++p) bias += dy[(n * g.k + k) * g.oh * g.ow + p];
    db[k] = static_cast<float>(bias);
  }
}

void conv_transpose2d_grad_bias_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& s = call.shapes[0];
  const int64_t plane = s[2] * s[3];
  const Range range = split_range(s[1], rank, width);
  for (int64_t c = range.begin; c < range.end; ++c) {
    double acc = 0.0;
    for (int64_t n = 0; n < s[0]; ++n)
      for (int64_t p = 0; p < plane; ++p) acc += buf[0][(n * s[1] + c) * plane + p];
    buf[1][c] = static_cast<float>(acc);
  }
}

}  // namespace corun::codelets
