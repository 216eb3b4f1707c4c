// Graph::fuse_conv_activation: a relu, clip, hard_swish or hard_sigmoid that alone reads a conv2d's output
// becomes that convolution's activation (ConvEpilogue, codelets/conv2d/conv2d.hpp). ResNet, GoogLeNet and
// Inception follow nearly every convolution (its BatchNorm folded in by fold_batch_norm) with a ReLU,
// MobileNetV2 with a ReLU6 (Clip 0..6), MobileNetV3 with a HardSwish (and its squeeze-excitation with a
// HardSigmoid):
// as separate nodes, each is a task and a pass over an activation tensor that has left the cache since the
// convolution wrote it. Fused, every kernel (reference, im2col, oneDNN) applies the op's own formula to the
// outputs it has just written, so the graph computes the same bits.
#include <corun/graph.hpp>

#include "codelets/conv2d/conv2d.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/passes/inference_pass.hpp"
#include "graphs/passes/uses.hpp"

#include <vector>

namespace corun {
namespace {

using codelets::ConvActivation;
using codelets::ConvEpilogue;
using codelets::OpKind;
using detail::GraphImpl;
using detail::Node;
using detail::Uses;

// The activation `n` would become, or none when it is not a relu, clip, hard_swish or hard_sigmoid.
ConvEpilogue activation_of(const Node& n) {
  const float f0 = codelets::float_attr(n.call, 0), f1 = codelets::float_attr(n.call, 1);
  switch (n.call.kind) {
    case OpKind::relu: return {ConvActivation::relu};
    case OpKind::clip: return {ConvActivation::clip, f0, f1};
    case OpKind::hard_swish: return {ConvActivation::hard_swish};
    case OpKind::hard_sigmoid: return {ConvActivation::hard_sigmoid, f0, f1};  // alpha, beta
    default: return {};
  }
}

// Whether `act` (an activation node) can become part of node `conv`.
bool fusable(const GraphImpl& g, const Uses& u, const Node& act, int conv) {
  if (conv < 0) return false;
  const Node& c = g.nodes[static_cast<size_t>(conv)];
  if (c.call.kind != OpKind::conv2d || ConvEpilogue::of(c.call).any()) return false;
  const int y = c.buffers.back();
  const detail::Value& v = g.values[static_cast<size_t>(y)];
  // The activation reads the convolution's output and nothing else does, nobody else writes it, and the user
  // never reads it (Graph::keep, a graph output).
  return act.buffers.size() == 2 && act.buffers[0] == y && !v.kept && u.read_by(y) == 1 && u.written_by(y) == 1;
}

}  // namespace

int Graph::fuse_conv_activation() {
  GraphImpl& g = *impl_;
  detail::check_inference_pass(g, "fuse_conv_activation", "fuse",
                               ", whose gradient nodes read the activation's input; fusing is for inference graphs "
                               "only");
  const Uses uses = Uses::of(g);
  std::vector<int> replaced_by(g.nodes.size(), -1);  // conv node -> the activation node it absorbed
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    if (!activation_of(n).any()) continue;
    const int producer = g.values[static_cast<size_t>(n.buffers[0])].producer;
    if (fusable(g, uses, n, producer) && replaced_by[static_cast<size_t>(producer)] < 0)
      replaced_by[static_cast<size_t>(producer)] = static_cast<int>(k);
  }
  std::vector<bool> absorbed(g.nodes.size(), false);
  int fused = 0;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const int a = replaced_by[k];
    if (a < 0) continue;
    Node& conv = g.nodes[k];
    const Node& act = g.nodes[static_cast<size_t>(a)];
    const ConvEpilogue e = activation_of(act);
    ConvEpilogue::set(conv.call.i, e.kind, e.lo, e.hi);
    // The convolution now writes the activation's output; its own output disappears.
    detail::Value& old = g.values[static_cast<size_t>(conv.buffers.back())];
    old.fused_away = true;
    old.data = detail::HostBuffer(0);
    conv.buffers.back() = act.buffers[1];
    absorbed[static_cast<size_t>(a)] = true;
    ++fused;
  }
  if (fused == 0) return 0;
  std::vector<Node> out;
  out.reserve(g.nodes.size() - static_cast<size_t>(fused));
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!absorbed[k]) out.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(out);
  g.recompute_producers();
  g.activations_fused = true;
  return fused;
}

}  // namespace corun
