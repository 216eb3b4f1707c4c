// codelets/work_items.hpp — how many balanced work items a call's fast kernel cuts itself into.
//
// Every kernel splits whole items between the members of its team (split_range): images or channel tiles of a
// convolution, tiles of a product, planes of a pooling, channels of a batch norm. A member beyond the item count
// gets nothing to do, so the count is the widest team the call can use: the engine caps each task's width at it
// (TaskHint::max_width), so no policy gives an op cores it would leave idle, and a simulated run, which takes its
// widths from the same hints, never charges a width the op cannot use. Shapes and attributes only: the cut
// never depends on the width.
#pragma once

#include "codelets/op.hpp"

#include <cstdint>

namespace corun::codelets {

/// The work items of `call`'s fast kernel, or 0 where the op's kernels do not say (its max width holds).
int64_t work_items(const OpCall& call);

/// The widest team `call` can use: min(`max_width`, work_items(call)) where the items are known, at least 1.
int useful_width(const OpCall& call, int max_width);

}  // namespace corun::codelets
