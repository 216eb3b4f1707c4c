// graphs/passes/fuse_elementwise.hpp — fuses chains of same-shape elementwise nodes into ew_chain nodes.
//
// A node of a chainable kind (codelets::ew_arity > 0, every buffer the same shape: so no bias add) absorbs
// the group producing one of its operands when that operand is an intermediate nobody else needs:
//   - an activation or gradient (never an input, parameter or constant),
//   - written by exactly one node and read by exactly one node (this one),
//   - not kept (Graph::keep, the loss, any value grad() returns),
//   - and no node between a member of that group and this one writes a value the member reads (the fused
//     node runs at the position of its last member, so moving reads there must not cross a write).
// Groups are trees of at most kMaxEwInstructions nodes; each becomes one ew_chain node at its root's
// position whose program lists the members in creation order. Removed intermediates lose their buffer.
#pragma once

namespace corun::detail {
struct GraphImpl;
}

namespace corun::passes {

/// Runs the pass on `g` (no checks of the graph's state: see Graph::fuse_elementwise). Returns the number
/// of nodes removed.
int fuse_elementwise(detail::GraphImpl& g);

}  // namespace corun::passes
