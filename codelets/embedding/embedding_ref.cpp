// Reference embedding and embedding_grad: one element at a time, the specification.
#include "codelets/embedding/embedding.hpp"

#include "base/check.hpp"

#include <cmath>

namespace corun::codelets {

int64_t embedding_row(const float* idx, int64_t n, int64_t vocab, const char* op) {
  const float v = idx[n];
  // Compared as floats first so NaN, infinities and huge values never reach the integer conversion.
  CORUN_CHECK(v >= 0.0f && v < static_cast<float>(vocab) && std::floor(v) == v, Status::invalid_argument,
              op << ": index " << v << " at position " << n << " is not an integer row of the table [0, " << vocab
                 << "); pass category ids in 0.." << vocab - 1 << " (as exact integers in the f32 index tensor)");
  return static_cast<int64_t>(v);
}

void embedding_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t vocab = call.shapes[1][0], dim = call.shapes[1][1];
  const Range r = split_range(call.shapes[0].numel(), rank, width);
  for (int64_t n = r.begin; n < r.end; ++n) {
    const int64_t row = embedding_row(buf[0], n, vocab, "embedding");
    for (int64_t d = 0; d < dim; ++d) buf[2][n * dim + d] = buf[1][row * dim + d];
  }
}

void embedding_grad_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t count = call.shapes[0].numel();
  const int64_t vocab = call.shapes[2][0], dim = call.shapes[2][1];
  const Range rows = split_range(vocab, rank, width);
  for (int64_t v = rows.begin; v < rows.end; ++v)
    for (int64_t d = 0; d < dim; ++d) {
      float acc = 0.0f;  // f32 in index order: the order is the specification, not the precision
      for (int64_t n = 0; n < count; ++n)
        if (embedding_row(buf[0], n, vocab, "embedding_grad") == v) acc += buf[1][n * dim + d];
      buf[2][v * dim + d] = acc;
    }
}

}  // namespace corun::codelets
