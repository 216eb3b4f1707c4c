// Reference batch_matmul: every C element as one double sum over the full batch entries mapping to it (in
// increasing order) and over K.
#include "codelets/batch_matmul/batch_matmul.hpp"

#include <algorithm>

namespace corun::codelets {

BatchMap batch_map(const OpCall& call) {
  BatchMap m;
  for (int op = 0; op < 3; ++op) m.dims = std::max(m.dims, call.shapes[static_cast<size_t>(op)].rank - 2);
  for (int d = 0; d < m.dims; ++d) m.full[static_cast<size_t>(d)] = 1;
  for (int op = 0; op < 3; ++op) {
    const Shape& s = call.shapes[static_cast<size_t>(op)];
    const int off = m.dims - (s.rank - 2);  // right alignment
    int64_t step = 1;
    for (int d = s.rank - 3; d >= 0; --d) {
      const size_t fd = static_cast<size_t>(d + off);
      m.full[fd] = std::max(m.full[fd], s[d]);
      m.stride[static_cast<size_t>(op)][fd] = s[d] == 1 ? 0 : step;
      step *= s[d];
    }
  }
  for (int d = 0; d < m.dims; ++d) m.count *= m.full[static_cast<size_t>(d)];
  return m;
}

int64_t BatchMap::entry(int op, int64_t f) const {
  int64_t e = 0;
  for (int d = dims - 1; d >= 0; --d) {
    e += (f % full[static_cast<size_t>(d)]) * stride[static_cast<size_t>(op)][static_cast<size_t>(d)];
    f /= full[static_cast<size_t>(d)];
  }
  return e;
}

void batch_matmul_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const Shape& sa = call.shapes[0];
  const Shape& sc = call.shapes[2];
  const bool ta = call.i[0] != 0, tb = call.i[1] != 0;
  const int64_t m = sc[sc.rank - 2], n = sc[sc.rank - 1];
  const int64_t k = ta ? sa[sa.rank - 2] : sa[sa.rank - 1];
  const BatchMap map = batch_map(call);
  const int64_t c_entries = sc.numel() / (m * n);
  const Range r = split_range(c_entries * m, rank, width);  // rows of C over all its entries
  for (int64_t row = r.begin; row < r.end; ++row) {
    const int64_t ce = row / m, i = row % m;
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t f = 0; f < map.count; ++f) {
        if (map.entry(2, f) != ce) continue;
        const float* a = buf[0] + map.entry(0, f) * m * k;
        const float* b = buf[1] + map.entry(1, f) * k * n;
        for (int64_t p = 0; p < k; ++p)
          acc += static_cast<double>(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
      }
      buf[2][ce * m * n + i * n + j] = static_cast<float>(acc);
    }
  }
}

}  // namespace corun::codelets
