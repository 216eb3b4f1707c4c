// Fast embedding (row copies) and embedding_grad (zero the member's dT rows, then one pass over the
// indices adding the rows that fall in them). The backward's cost is one pass over the N indices per
// member plus its share of dT, instead of the reference's V * D * N scan.
#include "codelets/embedding/embedding.hpp"

#include <cstring>

namespace corun::codelets {

void embedding_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t vocab = call.shapes[1][0], dim = call.shapes[1][1];
  const Range r = split_range(call.shapes[0].numel(), rank, width);
  const float* idx = buf[0];
  const float* table = buf[1];
  float* y = buf[2];
  for (int64_t n = r.begin; n < r.end; ++n) {
    const int64_t row = embedding_row(idx, n, vocab, "embedding");
    std::memcpy(y + n * dim, table + row * dim, static_cast<size_t>(dim) * sizeof(float));
  }
}

void embedding_grad_fast(const OpCall& call, float* const* buf, int rank, int width) {
  const int64_t count = call.shapes[0].numel();
  const int64_t vocab = call.shapes[2][0], dim = call.shapes[2][1];
  const Range rows = split_range(vocab, rank, width);
  if (rows.size() <= 0) return;
  const float* idx = buf[0];
  const float* dy = buf[1];
  float* dt = buf[2];
  std::memset(dt + rows.begin * dim, 0, static_cast<size_t>(rows.size() * dim) * sizeof(float));
  for (int64_t n = 0; n < count; ++n) {
    const int64_t v = embedding_row(idx, n, vocab, "embedding_grad");
    if (v < rows.begin || v >= rows.end) continue;  // another member's row
    float* __restrict dst = dt + v * dim;
    const float* __restrict src = dy + n * dim;
    for (int64_t d = 0; d < dim; ++d) dst[d] += src[d];
  }
}

}  // namespace corun::codelets
