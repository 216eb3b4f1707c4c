// graphs/passes/group_parallel_ops.hpp — the parallel-op grouping pass (MXNet's parallel-op subgraph
// proposal, seed 003).
//
// Small independent ops of the same kind run one after another when each is its own task, each paying the
// runtime's per-task cost. The pass finds groups of such siblings and replaces each group by one `group`
// node (codelets/group/group.hpp), whose SPMD members each run a contiguous share of the group's ops. The
// three patterns of the proposal:
//   - fan-out: the members all read outputs of one node X (26 embeddings after one split of the ids);
//   - fan-in: one node Y reads an output of every member (26 embeddings feeding one concat);
//   - between: both at once (split -> 26 embeddings -> concat, the proposal's figure 1).
// The pass repeats until a round makes no group: a group node is one node, so ops that each read one
// member's output (PathNet's ReLUs after its grouped module convs) fan out from it in the next round, and
// parallel branches are grouped level by level.
// Rules:
//   - only kinds on the whitelist (whitelisted(): the groupable column of codelets/ops.def): kernels that
//     touch nothing but their buffers and the stack and give the same bits at any width, so running them
//     side by side inside one task is safe;
//   - members are pairwise independent (no path between them in the dependency DAG StarPU derives);
//   - the group node takes the position of its last member (or of its first, if that keeps more
//     members), so a member moves only if no other node it passes writes what it reads or touches what
//     it writes; a final check keeps every dependency edge of the original DAG pointing forward;
//   - a group has at least `min_size` members (smaller groups stay as they are);
//   - a member has at most codelets::kMaxGroupMemberBuffers buffers.
// Values are untouched (no buffer is removed): the group's buffers are the distinct values its members
// use, so the rewritten graph computes bitwise the same numbers.
#pragma once

#include "codelets/op.hpp"

#include <functional>
#include <string>
#include <vector>

namespace corun::detail {
struct GraphImpl;
}

namespace corun::passes {

/// The pass's settings. The engine's plan step fills them from its Config (CORUN_PARALLEL_OPS,
/// CORUN_PARALLEL_OPS_MIN and the command's default); nothing here reads the environment.
struct ParallelOpOptions {
  bool enabled = true;  ///< run the pass at all
  int min_size = 2;     ///< smallest group worth one task
};

/// Asked before each group is made, with the members' calls in creation order: false leaves the members
/// separate (the engine's plan step keeps only groups its per-width models predict a gain for).
using AcceptGroup = std::function<bool(const std::vector<const codelets::OpCall*>& members)>;

/// Which pattern a group was found by.
enum class GroupPattern { fan_out, fan_in, between };
const char* pattern_name(GroupPattern p);

struct OpGroup {
  codelets::OpKind kind;
  GroupPattern pattern;
  std::vector<std::string> members;  ///< node names, in creation order
};

/// May a node of this kind be put in a group?
bool whitelisted(codelets::OpKind kind);

/// Runs the pass on `g` (no checks of the graph's state: see Graph::group_parallel_ops). Returns the groups
/// made, in the order of their nodes. `accept` (empty: every group the rules allow) may decline a group.
std::vector<OpGroup> group_parallel_ops(detail::GraphImpl& g, const ParallelOpOptions& options,
                                        const AcceptGroup& accept = {});

}  // namespace corun::passes
