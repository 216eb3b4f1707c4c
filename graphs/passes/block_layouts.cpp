// Graph::block_layouts: activations stay in oneDNN's blocked layout between the convolutions that run oneDNN's
// blocked kernels, so that those convolutions stop reordering them to NCHW and back (codelets/conv2d/conv_layout.hpp
// has the layout and why). A tensor is kept blocked when every node that touches it takes it so:
//   - a conv2d that reads it as X or writes it as Y and runs oneDNN's blocked kernels (use_dnnl_conv and not
//     dnnl_plain_layout: a convolution on the plain layouts would reorder it back, and its kernel choice must not
//     change, so that the bits do not);
//   - a per-element op whose buffers all have one shape, when all of them are kept blocked (the op then computes
//     on blocked bytes exactly what it computed on NCHW ones).
// Inputs, parameters, kept tensors (the user reads them: Graph::keep, graph outputs) and tensors nobody reads stay
// plain, and so does any tensor whose channels are not whole blocks.
#include <corun/graph.hpp>

#include "base/check.hpp"
#include "codelets/conv2d/conv2d.hpp"
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv_layout.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/passes/inference_pass.hpp"
#include "graphs/passes/uses.hpp"

#include <vector>

namespace corun {
namespace {

using codelets::OpKind;
using detail::GraphImpl;
using detail::Node;
using detail::Value;

// A per-element op of equal shapes (an ew_chain of them, from fuse_elementwise, too): its kernels index every
// buffer alike, so any layout common to all of them gives the same values at the same places.
bool per_element(const Node& n) {
  const OpKind k = n.call.kind;
  if (codelets::op_info(k).ew_arity == 0 && k != OpKind::clip && k != OpKind::leaky_relu && k != OpKind::ew_chain)
    return false;
  for (const Shape& s : n.call.shapes)
    if (s != n.call.shapes[0]) return false;
  return true;
}

// Whether conv2d node `n` runs oneDNN's blocked kernels (its X and Y may then be blocked).
bool blocked_conv(const Node& n) {
  if (n.call.kind != OpKind::conv2d) return false;
  const auto& s = n.call.shapes;
  const codelets::ConvGeometry geom = codelets::ConvGeometry::of(n.call, s[0], s[1], s.back());
  return codelets::use_dnnl_conv(geom, OpKind::conv2d) && !codelets::dnnl_plain_layout(geom, OpKind::conv2d);
}

// What a node does with blocked buffers: a blocked convolution takes its X and Y blocked, a per-element op all
// of its buffers or none, any other node none.
enum class Role { blocked_conv, per_element, other };

Role role_of(const Node& n) {
  if (blocked_conv(n)) return Role::blocked_conv;
  return per_element(n) ? Role::per_element : Role::other;
}

}  // namespace

int Graph::block_layouts() {
  GraphImpl& g = *impl_;
  detail::check_inference_pass(g, "block_layouts", "block",
                               ", whose gradient kernels take NCHW only; blocked layouts are for inference graphs");
  const int64_t block = codelets::dnnl_channel_block();
  if (block == 0) return 0;
  const detail::Uses uses = detail::Uses::of(g);
  std::vector<bool> blocked(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    const int id = static_cast<int>(v);
    blocked[v] = val.kind == ValueKind::activation && !val.kept && !val.fused_away && val.channel_block == 0 &&
                 val.shape.rank == 4 && val.shape[1] % block == 0 && val.shape.numel() > 0 &&
                 uses.written_by(id) == 1 && uses.read_by(id) >= 1;
  }
  std::vector<Role> roles;
  roles.reserve(g.nodes.size());
  for (const Node& n : g.nodes) {
    roles.push_back(role_of(n));
    for (size_t b = 0; b < n.buffers.size(); ++b) {
      const bool takes = roles.back() == Role::per_element ||
                         (roles.back() == Role::blocked_conv && (b == 0 || b + 1 == n.buffers.size()));
      if (!takes) blocked[static_cast<size_t>(n.buffers[b])] = false;
    }
  }
  // A per-element op computes in one layout: one plain operand makes all of its operands plain. Repeated until
  // nothing changes (each round only clears, so it ends).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      if (roles[k] != Role::per_element) continue;
      const Node& n = g.nodes[k];
      bool all = true;
      for (int v : n.buffers) all = all && blocked[static_cast<size_t>(v)];
      if (all) continue;
      for (int v : n.buffers) {
        changed = changed || blocked[static_cast<size_t>(v)];
        blocked[static_cast<size_t>(v)] = false;
      }
    }
  }
  int count = 0;
  for (size_t v = 0; v < g.values.size(); ++v)
    if (blocked[v]) {
      g.values[v].channel_block = block;
      ++count;
    }
  if (count == 0) return 0;
  for (Node& n : g.nodes)
    if (n.call.kind == OpKind::conv2d)
      codelets::ConvLayouts::set(n.call.i, g.values[static_cast<size_t>(n.buffers[0])].channel_block,
                                 g.values[static_cast<size_t>(n.buffers.back())].channel_block);
  g.layouts_blocked = true;
  return count;
}

int Graph::channel_block(Tensor t) const {
  CORUN_CHECK(t.valid() && t.belongs_to(*this), Status::invalid_argument,
              "channel_block: the tensor is not from this graph");
  return static_cast<int>(impl_->values[static_cast<size_t>(t.id())].channel_block);
}

}  // namespace corun
