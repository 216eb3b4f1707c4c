// sub's kernels: the shared elementwise loops over its scalar formulas (codelets/elementwise.hpp).
#include "codelets/sub/sub.hpp"

#include "codelets/elementwise.hpp"
#include "codelets/elementwise_kernels.hpp"

namespace corun::codelets {

void sub_ref(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_ref([](float a, float b) { return ew::sub_ref(a, b); }, call, buf, rank, width);
}
void sub_fast(const OpCall& call, float* const* buf, int rank, int width) {
  ew::binary_fast([](float a, float b) { return ew::sub_fast(a, b); }, call, buf, rank, width);
}

}  // namespace corun::codelets
