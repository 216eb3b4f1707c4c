// binary_bcast and binary_bcast_grad kernels (fast and reference). The forward splits C's elements; its
// inner loop runs along C's last dimension with A's and B's strides there (1 or 0), and takes the plain
// vectorisable path when both operands are contiguous. The gradient splits dX's elements (see the header).
#include "codelets/broadcast/broadcast.hpp"

#include "codelets/broadcast/broadcast_formulas.hpp"
#include "codelets/elementwise_kernels.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

using Ext = std::array<int64_t, kMaxDims>;

struct View {
  Ext out;  ///< C's padded extents
  Ext sa;   ///< A's strides along them
  Ext sb;   ///< B's strides along them
};

View view_of(const OpCall& call) {
  View v;
  v.out = padded_extents(call.shapes[2]);
  v.sa = broadcast_strides(call.shapes[0], v.out);
  v.sb = broadcast_strides(call.shapes[1], v.out);
  return v;
}

int64_t offset(const Ext& idx, const Ext& stride) {
  int64_t o = 0;
  for (int d = 0; d < kMaxDims; ++d) o += idx[static_cast<size_t>(d)] * stride[static_cast<size_t>(d)];
  return o;
}

// C[r] = f(A, B) over C's elements in r, one run along the last dimension at a time.
template <class F>
void forward(F f, const View& v, const float* a, const float* b, float* c, Range r) {
  const int64_t last = v.out[kMaxDims - 1];
  const int64_t ta = v.sa[kMaxDims - 1], tb = v.sb[kMaxDims - 1];
  for (int64_t e = r.begin; e < r.end;) {
    const Ext idx = unravel(e, v.out);
    const int64_t len = std::min(last - idx[kMaxDims - 1], r.end - e);
    const float* ar = a + offset(idx, v.sa);
    const float* br = b + offset(idx, v.sb);
    if (ta == 1 && tb == 1) {
      ew::map2(f, ar, br, c + e, len);
    } else {
      for (int64_t t = 0; t < len; ++t) c[e + t] = f(ar[t * ta], br[t * tb]);
    }
    e += len;
  }
}

template <class Acc>
void backward(const OpCall& call, float* const* buf, int rank, int width) {
  const auto op = static_cast<BinaryOp>(call.i[0]);
  const int operand = static_cast<int>(call.i[1]);
  const View v = view_of(call);
  const Ext px = padded_extents(call.shapes[static_cast<size_t>(operand)]);
  const float* a = buf[0];
  const float* b = buf[1];
  const float* dc = buf[2];
  float* dx = buf[3];
  Ext cstride{};  // C's own strides
  int64_t s = 1;
  for (int d = kMaxDims - 1; d >= 0; --d) {
    cstride[static_cast<size_t>(d)] = s;
    s *= v.out[static_cast<size_t>(d)];
  }
  const Range r = split_range(numel(call, 3), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    const Ext xi = unravel(e, px);
    // C's index range for this dX element: the whole extent along the broadcast dims, xi elsewhere.
    Ext lo{}, hi{};
    for (size_t d = 0; d < kMaxDims; ++d) {
      const bool spread = px[d] == 1 && v.out[d] > 1;
      lo[d] = spread ? 0 : xi[d];
      hi[d] = spread ? v.out[d] : xi[d] + 1;
    }
    Acc acc = 0;
    Ext ci{};
    for (ci[0] = lo[0]; ci[0] < hi[0]; ++ci[0])
      for (ci[1] = lo[1]; ci[1] < hi[1]; ++ci[1])
        for (ci[2] = lo[2]; ci[2] < hi[2]; ++ci[2])
          for (ci[3] = lo[3]; ci[3] < hi[3]; ++ci[3]) {
            const Acc av = a[offset(ci, v.sa)], bv = b[offset(ci, v.sb)], g = dc[offset(ci, cstride)];
            acc += bcast::partial<Acc>(op, operand, av, bv, g);
          }
    dx[e] = static_cast<float>(acc);
  }
}

}  // namespace

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::add:
      return "add";
    case BinaryOp::sub:
      return "sub";
    case BinaryOp::mul:
      return "mul";
    case BinaryOp::div:
      return "div";
    case BinaryOp::pow:
      return "pow";
  }
  return "?";
}

Ext padded_extents(const Shape& s) {
  Ext e;
  e.fill(1);
  for (int d = 0; d < s.rank; ++d) e[static_cast<size_t>(kMaxDims - s.rank + d)] = s[d];
  return e;
}

Ext broadcast_strides(const Shape& s, const Ext& out) {
  const Ext ext = padded_extents(s);
  Ext stride{};
  int64_t step = 1;
  for (int d = kMaxDims - 1; d >= 0; --d) {
    const auto k = static_cast<size_t>(d);
    stride[k] = ext[k] == 1 && out[k] != 1 ? 0 : step;
    step *= ext[k];
  }
  return stride;
}

Ext unravel(int64_t e, const Ext& ext) {
  Ext idx{};
  for (int d = kMaxDims - 1; d >= 0; --d) {
    idx[static_cast<size_t>(d)] = e % ext[static_cast<size_t>(d)];
    e /= ext[static_cast<size_t>(d)];
  }
  return idx;
}

void binary_bcast_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const auto op = static_cast<BinaryOp>(call.i[0]);
  const auto f = [op](float p, float q) {
    return static_cast<float>(bcast::apply<double>(op, static_cast<double>(p), static_cast<double>(q)));
  };
  forward(f, view_of(call), buf[0], buf[1], buf[2], split_range(numel(call, 2), rank, width));
}

void binary_bcast_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const View v = view_of(call);
  const Range r = split_range(numel(call, 2), rank, width, ew::kBlock);
  // One instantiation per operation, so each inner loop is a plain arithmetic loop.
  switch (static_cast<BinaryOp>(call.i[0])) {
    case BinaryOp::add:
      return forward([](float p, float q) { return p + q; }, v, buf[0], buf[1], buf[2], r);
    case BinaryOp::sub:
      return forward([](float p, float q) { return p - q; }, v, buf[0], buf[1], buf[2], r);
    case BinaryOp::mul:
      return forward([](float p, float q) { return p * q; }, v, buf[0], buf[1], buf[2], r);
    case BinaryOp::div:
      return forward([](float p, float q) { return p / q; }, v, buf[0], buf[1], buf[2], r);
    case BinaryOp::pow:
      return forward([](float p, float q) { return std::pow(p, q); }, v, buf[0], buf[1], buf[2], r);
  }
}

void binary_bcast_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  backward<double>(call, buf, rank, width);
}

void binary_bcast_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  backward<float>(call, buf, rank, width);
}

}  // namespace corun::codelets
