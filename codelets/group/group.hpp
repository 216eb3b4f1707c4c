// group: several independent ops run as one SPMD task (the parallel op of the grouping pass,
// graphs/passes/group_parallel_ops.hpp). `call.members` holds the members' own calls; the group's buffers
// are the distinct values they use, and `call.program` maps each member's buffers onto them (member 0's
// nbuffers() indices, then member 1's, ...). Team member `rank` of `width` runs members
// split_range(members, rank, width) one after the other, each as a team of one (its own kernel with rank 0,
// width 1): kernels are width-independent, so the group computes bitwise what the members did alone.
#pragma once

#include "codelets/op.hpp"

#include <vector>

namespace corun::codelets {

/// Most buffers one member may have (the group kernel gathers a member's pointers on the stack).
inline constexpr int kMaxGroupMemberBuffers = 16;

/// How long a group runs on a team of `width` given each member's time at width 1 (µs, in member order):
/// team member r runs split_range(members, r, width) one after another, so the group lasts as long as the
/// slowest member's share. The one estimate of the grouping pass (engine/pass_gain.cpp) and of a group's
/// model in simulated runs (codelets/starpu/codelets.cpp).
double group_time_us(const std::vector<double>& member_us, int width);

void group_ref(const OpCall& call, float* const* buf, int rank, int width);
void group_fast(const OpCall& call, float* const* buf, int rank, int width);

}  // namespace corun::codelets
