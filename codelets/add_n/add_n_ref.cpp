// Reference add_n: one element at a time, inputs in buffer order.
#include "codelets/add_n/add_n.hpp"

namespace corun::codelets {

void add_n_ref(const OpCall& call, float* const* buf, int rank, int width) {
  const int nx = call.nbuffers() - 1;
  const Range r = split_range(numel(call, nx), rank, width);
  for (int64_t e = r.begin; e < r.end; ++e) {
    float acc = buf[0][e];
    for (int x = 1; x < nx; ++x) acc += buf[x][e];
    buf[nx][e] = acc;
  }
}

}  // namespace corun::codelets
