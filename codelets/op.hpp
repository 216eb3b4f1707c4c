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

/// Every op kind corun knows, one per row of codelets/ops.def. Backward kernels are ops of their own (a
/// gradient node is an ordinary node).
enum class OpKind : int {
#define CORUN_OP(name, max_width, groupable, ew_arity, colour, graph_rules) name,
#include "codelets/ops.def"
#undef CORUN_OP
  count_  ///< number of kinds (not an op)
};

/// How a buffer is accessed; maps 1:1 onto STARPU_R / STARPU_W / STARPU_RW.
enum class Access : int { read, write, readwrite };

/// Maximum integer attributes of an op call (convolutions need strides, pads, dilations and groups per
/// spatial dim; transposes a permutation). Perfmodel footprints hash the first four as before and the rest
/// only when one is set, so the footprints of ops that use four or fewer did not change when this grew.
inline constexpr int kMaxIntAttrs = 16;
/// Attributes the footprint always hashes (the capacity before it grew).
inline constexpr int kFootprintBaseAttrs = 4;

/// Everything a kernel needs to know besides the buffer pointers. Immutable once the node exists, except for
/// the plan step's passes.
struct OpCall {
  OpKind kind = OpKind::count_;
  std::vector<Shape> shapes;              ///< one per buffer, in buffer order
  std::vector<Access> modes;              ///< one per buffer, in buffer order
  std::array<int64_t, kMaxIntAttrs> i{};  ///< op-specific integers (see OpKind)
  float f = 0.0f;                         ///< op-specific float (learning rate, sum scale)
  std::vector<int32_t> program;           ///< ew_chain's instructions, group's buffer map (else empty)
  std::vector<OpCall> members;            ///< group's member calls (empty for every other kind)
  /// The implementation of the op's list that runs this call (conv_impls.hpp for the convolution passes), set by
  /// the engine's plan step from Config's preferences; 0: not chosen, the list's choice under `auto` at run time.
  uint8_t impl = 0;

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
  bool groupable;        ///< group_parallel_ops may put it in a group task (codelets/ops.def)
  int ew_arity;          ///< operands inside an ew_chain; 0: not chainable
  const char* colour;    ///< fixed Gantt colour, "" for none
  bool graph_rules;      ///< graphs/ops/ has its shape and backward rule
};

/// The description of `kind`. Every OpKind below count_ has one.
const OpInfo& op_info(OpKind kind);

/// The kind called `name` ("matmul"), or count_ when no op has that name.
OpKind op_kind(const std::string& name);

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
