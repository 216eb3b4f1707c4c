// Reference matmul: the textbook triple loop, accumulated in double. Members own whole rows of C.
#include "codelets/matmul/matmul.hpp"

#include "base/check.hpp"

namespace corun::codelets {

void matmul_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sa = call.shapes[0];
  const Shape& sc = call.shapes[2];
  CORUN_ASSERT(sa.rank == 2 && call.shapes[1].rank == 2 && sc.rank == 2);
  const bool trans_a = call.i[0] != 0;
  const bool trans_b = call.i[1] != 0;
  const bool accumulate = call.i[2] != 0;
  const int64_t m = sc[0];
  const int64_t n = sc[1];
  const int64_t k = trans_a ? sa[0] : sa[1];
  const float* a = buf[0];
  const float* b = buf[1];
  float* c = buf[2];

  const Range rows = split_range(m, rank, width);
  for (int64_t i = rows.begin; i < rows.end; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        const float aip = trans_a ? a[p * m + i] : a[i * k + p];
        const float bpj = trans_b ? b[j * k + p] : b[p * n + j];
        acc += static_cast<double>(aip) * static_cast<double>(bpj);
      }
      if (accumulate) acc += static_cast<double>(c[i * n + j]);
      c[i * n + j] = static_cast<float>(acc);
    }
  }
}

}  // namespace corun::codelets
