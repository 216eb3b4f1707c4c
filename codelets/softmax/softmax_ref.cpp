// Reference softmax family: one lane at a time, sums in double.
#include "codelets/softmax/softmax.hpp"

#include <cmath>

namespace corun::codelets {
namespace {

struct Lanes {
  int64_t n, inner;
  Range range;
};

Lanes lanes(const OpCall& call, int rank, int width) {
  const Shape& s = call.shapes[0];
  const int dim = static_cast<int>(call.i[0]);
  return {s[dim], s.inner(dim), split_range(s.outer(dim) * s.inner(dim), rank, width)};
}

template <class Body>
void each_lane(const OpCall& call, int rank, int width, Body body) {
  const Lanes l = lanes(call, rank, width);
  for (int64_t lane = l.range.begin; lane < l.range.end; ++lane) {
    const int64_t base = (lane / l.inner) * l.n * l.inner + lane % l.inner;
    body(base, l.n, l.inner);
  }
}

}  // namespace

void softmax_ref(const OpCall& call, float* const* buf, int rank, int width) {
  each_lane(call, rank, width, [&](int64_t base, int64_t n, int64_t step) {
    double mx = -INFINITY, sum = 0.0;
    for (int64_t k = 0; k < n; ++k) mx = std::fmax(mx, buf[0][base + k * step]);
    for (int64_t k = 0; k < n; ++k) sum += std::exp(buf[0][base + k * step] - mx);
    for (int64_t k = 0; k < n; ++k)
      buf[1][base + k * step] = static_cast<float>(std::exp(buf[0][base + k * step] - mx) / sum);
  });
}

void log_softmax_ref(const OpCall& call, float* const* buf, int rank, int width) {
  each_lane(call, rank, width, [&](int64_t base, int64_t n, int64_t step) {
    double mx = -INFINITY, sum = 0.0;
    for (int64_t k = 0; k < n; ++k) mx = std::fmax(mx, buf[0][base + k * step]);
    for (int64_t k = 0; k < n; ++k) sum += std::exp(buf[0][base + k * step] - mx);
    const double shift = mx + std::log(sum);
    for (int64_t k = 0; k < n; ++k) buf[1][base + k * step] = static_cast<float>(buf[0][base + k * step] - shift);
  });
}

void softmax_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  each_lane(call, rank, width, [&](int64_t base, int64_t n, int64_t step) {
    double dot = 0.0;
    for (int64_t k = 0; k < n; ++k) dot += static_cast<double>(buf[0][base + k * step]) * buf[1][base + k * step];
    for (int64_t k = 0; k < n; ++k) {
      const int64_t e = base + k * step;
      buf[2][e] = static_cast<float>(buf[0][e] * (buf[1][e] - dot));
    }
  });
}

void log_softmax_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  each_lane(call, rank, width, [&](int64_t base, int64_t n, int64_t step) {
    double sum = 0.0;
    for (int64_t k = 0; k < n; ++k) sum += buf[1][base + k * step];
    for (int64_t k = 0; k < n; ++k) {
      const int64_t e = base + k * step;
      buf[2][e] = static_cast<float>(buf[1][e] - std::exp(static_cast<double>(buf[0][e])) * sum);
    }
  });
}

}  // namespace corun::codelets
