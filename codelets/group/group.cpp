// The group kernel: members' reference or fast kernels over a contiguous share of the members.
#include "codelets/group/group.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <array>

namespace corun::codelets {
namespace {

void run_members(const OpCall& call, float* const* buf, int rank, int width, bool reference) {
  const int64_t count = static_cast<int64_t>(call.members.size());
  const Range r = split_range(count, rank, width);
  // Offset of member m's buffer map in call.program: the sum of the earlier members' buffer counts.
  size_t at = 0;
  for (int64_t m = 0; m < r.begin; ++m) at += call.members[static_cast<size_t>(m)].shapes.size();
  std::array<float*, kMaxGroupMemberBuffers> ptrs{};
  for (int64_t m = r.begin; m < r.end; ++m) {
    const OpCall& member = call.members[static_cast<size_t>(m)];
    const int n = member.nbuffers();
    CORUN_CHECK(n <= kMaxGroupMemberBuffers && at + static_cast<size_t>(n) <= call.program.size(),
                Status::runtime_error, "group: member " << m << " has a malformed buffer map");
    for (int b = 0; b < n; ++b) ptrs[static_cast<size_t>(b)] = buf[call.program[at + static_cast<size_t>(b)]];
    const OpInfo& info = op_info(member.kind);
    (reference ? info.ref : info.fast)(member, ptrs.data(), 0, 1);
    at += static_cast<size_t>(n);
  }
}

}  // namespace

double group_time_us(const std::vector<double>& member_us, int width) {
  const int64_t count = static_cast<int64_t>(member_us.size());
  double slowest = 0.0;
  for (int r = 0; r < width; ++r) {
    const Range share = split_range(count, r, width);
    double sum = 0.0;
    for (int64_t m = share.begin; m < share.end; ++m) sum += member_us[static_cast<size_t>(m)];
    slowest = std::max(slowest, sum);
  }
  return slowest;
}

void group_ref(const OpCall& call, float* const* buf, int rank, int width) { run_members(call, buf, rank, width, true); }
void group_fast(const OpCall& call, float* const* buf, int rank, int width) { run_members(call, buf, rank, width, false); }

}  // namespace corun::codelets
