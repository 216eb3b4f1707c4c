// The static kernel table (one OpInfo per row of codelets/ops.def) and the SPMD range splitter every
// kernel uses. The kernels are declared here from the rows, so a new op needs no include in this file.
#include "codelets/op.hpp"

#include "base/check.hpp"

#include <algorithm>

namespace corun::codelets {

#define CORUN_OP(name, max_width, groupable, ew_arity, colour, graph_rules) \
  void name##_ref(const OpCall& call, float* const* buf, int rank, int width);   \
  void name##_fast(const OpCall& call, float* const* buf, int rank, int width);
#include "codelets/ops.def"
#undef CORUN_OP

namespace {

// Every kernel splits an output extent (elements, rows or matmul tiles), never a reduction, so any width
// is correct; 256 is the widest team the engine may form. Ops whose split unit is coarse (matmul tiles,
// softmax rows) simply leave members with an empty range idle when the tensor is small.
constexpr int kWide = 256;

// Indexed by OpKind: the rows and the enum come from the same list, in the same order.
const OpInfo kTable[] = {
#define CORUN_OP(name, max_width, groupable, ew_arity, colour, graph_rules) \
  OpInfo{#name, &name##_ref, &name##_fast, max_width, groupable != 0, ew_arity, colour, graph_rules != 0},
#include "codelets/ops.def"
#undef CORUN_OP
};

static_assert(sizeof(kTable) / sizeof(kTable[0]) == static_cast<size_t>(OpKind::count_),
              "kernel table must have one entry per OpKind");

}  // namespace

const OpInfo& op_info(OpKind kind) {
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= static_cast<int>(OpKind::count_)) CORUN_ABORT("op_info: invalid op kind " << k);
  return kTable[k];
}

OpKind op_kind(const std::string& name) {
  for (int k = 0; k < static_cast<int>(OpKind::count_); ++k)
    if (name == kTable[k].name) return static_cast<OpKind>(k);
  return OpKind::count_;
}

Range split_range(int64_t n, int rank, int width, int64_t align) {
  CORUN_ASSERT(n >= 0 && width >= 1 && rank >= 0 && rank < width && align >= 1);
  // Whole blocks of `align` are dealt out as evenly as possible; the first `extra` members get one more.
  const int64_t blocks = (n + align - 1) / align;
  const int64_t base = blocks / width;
  const int64_t extra = blocks % width;
  const int64_t first = rank * base + std::min<int64_t>(rank, extra);
  const int64_t count = base + (rank < extra ? 1 : 0);
  return Range{std::min(n, first * align), std::min(n, (first + count) * align)};
}

}  // namespace corun::codelets
