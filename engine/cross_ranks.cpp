// The engine's cross-rank hook (engine/cross_ranks.hpp): a pointer the MPI component sets, and the tree.
#include "engine/cross_ranks.hpp"

namespace corun::engine {

namespace {
CrossRanks* g_ranks = nullptr;
}

CrossRanks* cross_ranks() { return g_ranks; }
void set_cross_ranks(CrossRanks* ranks) { g_ranks = ranks; }

std::vector<int> rank_children(int rank, int size) {
  std::vector<int> children;
  for (int c = 2 * rank + 1; c <= 2 * rank + 2 && c < size; ++c) children.push_back(c);
  return children;
}

}  // namespace corun::engine
