// The static kernel table (one OpInfo per OpKind) and the SPMD range splitter every kernel uses.
#include "codelets/op.hpp"

#include "codelets/add/add.hpp"
#include "codelets/add_n/add_n.hpp"
#include "codelets/concat/concat.hpp"
#include "codelets/conv2d/conv2d.hpp"
#include "codelets/embedding/embedding.hpp"
#include "codelets/group/group.hpp"
#include "codelets/logistic_xent/logistic_xent.hpp"
#include "codelets/reduce_sum/reduce_sum.hpp"
#include "codelets/ew_chain/ew_chain.hpp"
#include "codelets/lstm_cell/lstm_cell.hpp"
#include "codelets/matmul/matmul.hpp"
#include "codelets/mul/mul.hpp"
#include "codelets/pool/pool.hpp"
#include "codelets/phased_gate/phased_gate.hpp"
#include "codelets/relu/relu.hpp"
#include "codelets/reshape/reshape.hpp"
#include "codelets/sgd/sgd.hpp"
#include "codelets/sgd_momentum/sgd_momentum.hpp"
#include "codelets/sigmoid/sigmoid.hpp"
#include "codelets/slice/slice.hpp"
#include "codelets/softmax_xent/softmax_xent.hpp"
#include "codelets/split/split.hpp"
#include "codelets/sub/sub.hpp"
#include "codelets/sum/sum.hpp"
#include "codelets/tanh/tanh.hpp"
#include "base/check.hpp"

#include <algorithm>

namespace corun::codelets {
namespace {

// Every kernel splits an output extent (elements, rows or matmul tiles), never a reduction, so any width
// is correct; 256 is the widest team the engine may form. Ops whose split unit is coarse (matmul tiles,
// softmax rows) simply leave members with an empty range idle when the tensor is small.
constexpr int kWide = 256;

// clang-format off
#define CORUN_OP(op) OpInfo{#op, &op##_ref, &op##_fast, kWide}

// Indexed by OpKind; the order must follow the enum exactly (checked by the static_assert and the tests).
const OpInfo kTable[] = {
    CORUN_OP(matmul),       CORUN_OP(add),          CORUN_OP(sub),          CORUN_OP(mul),
    CORUN_OP(sigmoid),      CORUN_OP(sigmoid_grad), CORUN_OP(tanh),         CORUN_OP(tanh_grad),
    CORUN_OP(relu),         CORUN_OP(relu_grad),    CORUN_OP(concat),       CORUN_OP(split),
    CORUN_OP(slice),        CORUN_OP(slice_grad),   CORUN_OP(sum),          CORUN_OP(sum_grad),
    CORUN_OP(softmax_xent), CORUN_OP(softmax_xent_grad), CORUN_OP(sgd),
    CORUN_OP(lstm_cell),    CORUN_OP(lstm_cell_grad), CORUN_OP(ew_chain),
    CORUN_OP(conv2d),       CORUN_OP(conv2d_grad_data), CORUN_OP(conv2d_grad_filter),
    CORUN_OP(max_pool),     CORUN_OP(max_pool_grad), CORUN_OP(avg_pool),      CORUN_OP(avg_pool_grad),
    CORUN_OP(add_n),        CORUN_OP(sgd_momentum), CORUN_OP(reshape),
    CORUN_OP(embedding),    CORUN_OP(embedding_grad),
    // The full reduction runs on one member: a wider team would only wait.
    OpInfo{"reduce_sum", &reduce_sum_ref, &reduce_sum_fast, 1}, CORUN_OP(reduce_sum_grad),
    CORUN_OP(logistic_xent), CORUN_OP(logistic_xent_grad), CORUN_OP(phased_gate),
    CORUN_OP(group),        CORUN_OP(phased_gate_grad),
};

#undef CORUN_OP
// clang-format on

static_assert(sizeof(kTable) / sizeof(kTable[0]) == static_cast<size_t>(OpKind::count_),
              "kernel table must have one entry per OpKind");

}  // namespace

const OpInfo& op_info(OpKind kind) {
  const int k = static_cast<int>(kind);
  if (k < 0 || k >= static_cast<int>(OpKind::count_)) CORUN_ABORT("op_info: invalid op kind " << k);
  return kTable[k];
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
