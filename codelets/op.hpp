// codelets/op.hpp — the uniform kernel interface every op implements.
//
// An op call is fully described by an OpCall (kind, one Shape per buffer, a few integer attributes, one
// float attribute and, for ew_chain, a small program) plus the buffer pointers. Every kernel, reference or
// fast, has the same signature
//
//     void kernel(const OpCall& call, float* const* buf, int rank, int width);
//
// and computes only its own slice of the outputs for member `rank` of a team of `width` (SPMD). Slices
// split output rows, columns or elements, never a reduction dimension, so the result is bitwise the same
// for every width. Kernels never create threads and never allocate in the iteration loop.
#pragma once

#include <corun/tensor.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace corun::codelets {

/// Every op kind corun knows. Backward kernels are ops of their own (a gradient node is an ordinary node).
enum class OpKind : int {
  matmul,            ///< C = op(A) * op(B) [+ C]   i: transA, transB, accumulate
  add,               ///< C = A + B, B same shape as A or a bias over A's last dim
  sub,               ///< C = A - B (same shapes)
  mul,               ///< C = A * B (same shapes)
  sigmoid,           ///< Y = 1 / (1 + exp(-X))
  sigmoid_grad,      ///< dX = dY * Y * (1 - Y)          buffers: Y, dY, dX
  tanh,              ///< Y = tanh(X)
  tanh_grad,         ///< dX = dY * (1 - Y^2)             buffers: Y, dY, dX
  relu,              ///< Y = max(X, 0)
  relu_grad,         ///< dX = X > 0 ? dY : 0             buffers: X, dY, dX
  concat,            ///< Y = concat(X0..Xk-1) along i[0]  buffers: X0..Xk-1, Y
  split,             ///< Y0..Yk-1 = split(X) along i[0]   buffers: X, Y0..Yk-1
  slice,             ///< Y = X[.., i[1] : i[1]+i[2], ..] along dim i[0]
  slice_grad,        ///< dX = zeros with dY placed at [i[1], i[1]+i[2]) along dim i[0]; buffers: dY, dX
  sum,               ///< Y = f * sum of X along dim i[0]  (Y has that dim removed; a 1-D X gives [1])
  sum_grad,          ///< dX = f * dY broadcast along dim i[0]; buffers: dY, dX
  softmax_xent,      ///< P = softmax(Z) rows; L[b] = -sum_c T[b,c] log P[b,c]; buffers: Z, T, P, L
  softmax_xent_grad, ///< dZ = (P - T) * dL[b]; buffers: P, T, dL, dZ
  sgd,               ///< W -= f * G; buffers: W (RW), G
  lstm_cell,         ///< fused LSTM cell; buffers: Z [B,4H] (i,f,g,o pre-activations), Cp [B,H] -> C, H, A [B,4H]
                     ///< (activated gates), TC = tanh(C)  (A and TC are saved for the backward)
  lstm_cell_grad,    ///< buffers: A, Cp, TC, dH, dC (gradient of C from its other readers) -> dZ [B,4H], dCp
  ew_chain,          ///< fused same-shape elementwise ops; buffers: inputs.., output; `program` (ew_chain.hpp)
  conv2d,            ///< NCHW convolution + bias; buffers X, W, B -> Y; i: stride, pad (conv2d/conv2d.hpp)
  conv2d_grad_data,  ///< buffers dY, W -> dX; i: stride, pad
  conv2d_grad_filter,///< buffers X, dY -> dW, dB; i: stride, pad
  max_pool,          ///< buffers X -> Y; i: kernel, stride, pad (pool/pool.hpp)
  max_pool_grad,     ///< buffers X, dY -> dX (ties to the first max)
  avg_pool,          ///< buffers X -> Y; i: kernel, stride, pad
  avg_pool_grad,     ///< buffers dY -> dX
  add_n,             ///< Y = X0 + ... + Xk-1 (same shapes); buffers X0..Xk-1, Y
  sgd_momentum,      ///< V = mu V + G; W -= f V; buffers W (RW), V (RW), G; i[0]: mu's float bits
  reshape,           ///< Y = X viewed with another shape (a copy); buffers X, Y
  embedding,         ///< Y[n,:] = T[idx[n],:]; buffers: idx (integers in f32), T [V,D], Y [N,D] (embedding.hpp)
  embedding_grad,    ///< dT = scatter-add of dY rows at idx in index order; buffers: idx, dY [N,D], dT [V,D]
  reduce_sum,        ///< Y[0] = f * sum of all of X (never split); buffers: X, Y [1]
  reduce_sum_grad,   ///< dX = f * dY[0]; buffers: dY [1], dX
  logistic_xent,     ///< L = softplus(Z) - T*Z elementwise (binary cross-entropy of sigmoid(Z)); buffers: Z, T, L
  logistic_xent_grad,///< dZ = (sigmoid(Z) - T) * dL; buffers: Z, T, dL, dZ
  phased_gate,       ///< Phased LSTM time gate K [B,H] from T [B], TAU [H], S [H]; f r_on, i[0] alpha bits
  group,             ///< independent ops as one task; `members` + buffer map in `program` (group.hpp)
  phased_gate_grad,  ///< dTAU, dS of the time gate; buffers T, TAU, S, dK -> dTAU [H], dS [H]; f, i as phased_gate
  count_             ///< number of kinds (not an op)
};

/// How a buffer is accessed; maps 1:1 onto STARPU_R / STARPU_W / STARPU_RW.
enum class Access : int { read, write, readwrite };

/// Maximum integer attributes of an op call.
inline constexpr int kMaxIntAttrs = 4;

/// Everything a kernel needs to know besides the buffer pointers. Immutable once the node exists.
struct OpCall {
  OpKind kind = OpKind::count_;
  std::vector<Shape> shapes;              ///< one per buffer, in buffer order
  std::vector<Access> modes;              ///< one per buffer, in buffer order
  std::array<int64_t, kMaxIntAttrs> i{};  ///< op-specific integers (see OpKind)
  float f = 0.0f;                         ///< op-specific float (learning rate, sum scale)
  std::vector<int32_t> program;           ///< ew_chain's instructions, group's buffer map (else empty)
  std::vector<OpCall> members;            ///< group's member calls (empty for every other kind)

  int nbuffers() const { return static_cast<int>(shapes.size()); }
};

/// Kernel signature shared by reference and fast kernels.
using Kernel = void (*)(const OpCall& call, float* const* buf, int rank, int width);

/// Which kernel the codelets run (CORUN_KERNELS=fast|ref).
enum class KernelChoice { fast, ref };

/// Static description of an op kind.
struct OpInfo {
  const char* name;      ///< "matmul"; also the perfmodel symbol suffix ("corun_matmul")
  Kernel ref;            ///< plain loops, the specification
  Kernel fast;           ///< the kernel used in production
  int max_width;         ///< widest team the op may use (>= 1)
};

/// The description of `kind`. Every OpKind below count_ has one.
const OpInfo& op_info(OpKind kind);

/// Half-open element range [begin, end).
struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
};

/// Member `rank`'s share of n items split over `width` members in contiguous blocks whose boundaries are
/// multiples of `align` (except the last one). Depends only on (n, rank, width, align); empty ranges are
/// possible when n is small.
Range split_range(int64_t n, int rank, int width, int64_t align = 1);

/// Floats a call touches in buffer `b` (product of its shape).
inline int64_t numel(const OpCall& call, int b) { return call.shapes[static_cast<size_t>(b)].numel(); }

}  // namespace corun::codelets
