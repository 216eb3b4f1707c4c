// graphs/ops/broadcast.hpp — numpy / ONNX multidirectional broadcasting for the binary builders.
//
// A broadcasting binary op is one line through binary_broadcast(): add, sub and mul keep their own
// same-shape kinds (ew_chain-fusable, their bits unchanged) and call it only for other shapes; div and pow
// always use it. binary_bcast's backward sums dC over each operand's broadcast dims (binary_bcast_grad).
#pragma once

#include <corun/graph.hpp>

#include "codelets/broadcast/broadcast.hpp"

#include <string>

namespace corun::graphs {

/// The numpy broadcast of shapes a and b into `out`; false when some aligned pair of extents differs and
/// neither is 1.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out);

/// Whether a builder of an op with a same-shape kind should make a binary_bcast node for a and b instead:
/// both valid, shapes differ, and (when `bias_ok`) b is not a 1-D bias over a's last extent.
bool needs_broadcast(Tensor a, Tensor b, bool bias_ok);

/// A binary_bcast node computing `op`.
Tensor binary_broadcast(Graph& graph, codelets::BinaryOp op, Tensor a, Tensor b, const std::string& name);

}  // namespace corun::graphs
