// Graph::block_layouts: activations (and, in a training graph, their gradients) stay in oneDNN's blocked layout
// between the convolutions that run oneDNN's blocked kernels, so that those convolutions stop reordering them to
// NCHW and back (codelets/conv2d/conv_layout.hpp has the layout and why). A tensor is kept blocked when every node
// that touches it takes it so:
//   - a convolution pass that runs oneDNN's blocked kernels (onednn or onednn-winograd in conv_impls.hpp: a
//     convolution on the plain layouts would reorder it back, and its kernel choice must not change, so that the
//     bits do not) and reads or writes it as an activation: conv2d's X and Y; conv2d_grad_data's dY and dX and
//     conv2d_grad_filter's X and dY with one group (their tiles of whole blocks);
//   - max and average pooling and their gradients, when all of their buffers are kept blocked
//     (max_pool_blocked.cpp, avg_pool_blocked.cpp), and batch norm and its gradient when all of their
//     activations are (batch_norm_blocked.cpp);
//   - concat and split along the channels when every part is whole blocks and all are kept blocked (image n's
//     channels [k0, k0 + kt) sit at the same bytes in NCHW and nChw<B>c, so the copies are the same);
//   - a per-element op whose buffers all have one shape, when all of them are kept blocked (the op then computes
//     on blocked bytes exactly what it computed on NCHW ones): relu, relu_grad, the adds that sum gradients.
// Inputs, parameters, kept tensors (the user reads them: Graph::keep, graph outputs) and tensors nobody reads stay
// plain, and so does any tensor whose channels are not whole blocks.
#include <corun/graph.hpp>

#include "base/check.hpp"
#include "codelets/batch_norm/batch_norm.hpp"
#include "codelets/conv2d/conv2d.hpp"
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/conv2d/conv_layout.hpp"
#include "codelets/pool/pool.hpp"
#include "graphs/graph_impl.hpp"
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

// Whether convolution node `n` runs oneDNN's blocked kernels for its pass (its activations may then be blocked).
bool blocked_conv(const Node& n) {
  const OpKind k = n.call.kind;
  if (!codelets::conv_takes_layouts(k)) return false;
  const codelets::ConvGeometry geom = *codelets::conv_pass_geometry(n.call);
  if (k != OpKind::conv2d && geom.groups != 1) return false;
  return codelets::is_onednn_blocked(codelets::conv_impl_of(n.call));
}

// Whether every buffer of `n` is a rank-4 tensor of whole channel blocks.
bool whole_blocks(const Node& n, int64_t block) {
  for (const Shape& s : n.call.shapes)
    if (s.rank != 4 || s[1] % block != 0) return false;
  return true;
}

// What a node does with blocked buffers: a blocked convolution takes its activations blocked one by one (the
// buffers activation_side() names), the other takers all of their rank-4 buffers or none, any other node none.
enum class Role { blocked_conv, all_or_none, other };

Role role_of(const Node& n, int64_t block) {
  if (blocked_conv(n)) return Role::blocked_conv;
  if (per_element(n)) return Role::all_or_none;
  const OpKind k = n.call.kind;
  if (codelets::is_pool(k) && whole_blocks(n, block)) return Role::all_or_none;
  if ((k == OpKind::concat || k == OpKind::split) && n.call.i[0] == 1 && whole_blocks(n, block))
    return Role::all_or_none;
  // Batch norm: its activations (X, Y; X, dY, dX), never its per-channel [C] buffers.
  if ((k == OpKind::batch_norm || k == OpKind::batch_norm_grad) && n.call.shapes[0].rank == 4 &&
      n.call.shapes[0][1] % block == 0)
    return Role::all_or_none;
  return Role::other;
}

// Buffer b of a blocked convolution: its input-side activation (X, or dX) as 'x', its output-side one (Y, or dY)
// as 'y', else 0 (filters, bias).
char activation_side(const Node& n, size_t b) {
  const size_t last = n.buffers.size() - 1;
  switch (n.call.kind) {
    case OpKind::conv2d: return b == 0 ? 'x' : b == last ? 'y' : 0;
    case OpKind::conv2d_grad_data: return b == 0 ? 'y' : b == 2 ? 'x' : 0;
    case OpKind::conv2d_grad_filter: return b == 0 ? 'x' : b == 1 ? 'y' : 0;
    default: return 0;
  }
}

// The buffer of a blocked convolution on `side` ('x' or 'y').
int buffer_on(const Node& n, char side) {
  for (size_t b = 0; b < n.buffers.size(); ++b)
    if (activation_side(n, b) == side) return n.buffers[b];
  return -1;
}

}  // namespace

int Graph::block_layouts() {
  GraphImpl& g = *impl_;
  CORUN_CHECK(g.bound_engines == 0, Status::invalid_argument,
              "block_layouts: the graph is bound to an Engine; block before the first Engine::run (or after "
              "Engine::release)");
  const int64_t block = codelets::dnnl_channel_block();
  if (block == 0) return 0;
  const detail::Uses uses = detail::Uses::of(g);
  std::vector<bool> blocked(g.values.size(), false);
  for (size_t v = 0; v < g.values.size(); ++v) {
    const Value& val = g.values[v];
    const int id = static_cast<int>(v);
    const bool computed = val.kind == ValueKind::activation || val.kind == ValueKind::gradient;
    blocked[v] = computed && !val.kept && !val.fused_away && val.channel_block == 0 && val.shape.rank == 4 &&
                 val.shape[1] % block == 0 && val.shape.numel() > 0 && uses.written_by(id) == 1 &&
                 uses.read_by(id) >= 1;
  }
  std::vector<Role> roles;
  roles.reserve(g.nodes.size());
  for (const Node& n : g.nodes) {
    roles.push_back(role_of(n, block));
    for (size_t b = 0; b < n.buffers.size(); ++b) {
      const bool takes = roles.back() == Role::all_or_none ||
                         (roles.back() == Role::blocked_conv && activation_side(n, b) != 0);
      if (!takes) blocked[static_cast<size_t>(n.buffers[b])] = false;
    }
  }
  // An all-or-none node computes in one layout: one plain operand makes all of its operands plain. Repeated until
  // nothing changes (each round only clears, so it ends).
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      if (roles[k] != Role::all_or_none) continue;
      const Node& n = g.nodes[k];
      bool all = true;
      for (size_t b = 0; b < n.buffers.size(); ++b)
        if (n.call.shapes[b].rank == 4) all = all && blocked[static_cast<size_t>(n.buffers[b])];
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
  const auto block_of = [&](int v) { return v < 0 ? int64_t{0} : g.values[static_cast<size_t>(v)].channel_block; };
  for (Node& n : g.nodes) {
    if (codelets::conv_takes_layouts(n.call.kind) && roles[static_cast<size_t>(&n - g.nodes.data())] == Role::blocked_conv)
      codelets::ConvLayouts::set(n.call.i, block_of(buffer_on(n, 'x')), block_of(buffer_on(n, 'y')));
    if (codelets::is_pool(n.call.kind)) n.call.i[codelets::kPoolBlockAttr] = block_of(n.buffers[0]);
    if (n.call.kind == OpKind::batch_norm || n.call.kind == OpKind::batch_norm_grad)
      n.call.i[codelets::kBatchNormBlockAttr] = block_of(n.buffers[0]);
  }
  g.layouts_blocked = true;
  return count;
}

int Graph::channel_block(Tensor t) const {
  CORUN_CHECK(t.valid() && t.belongs_to(*this), Status::invalid_argument,
              "channel_block: the tensor is not from this graph");
  return static_cast<int>(impl_->values[static_cast<size_t>(t.id())].channel_block);
}

}  // namespace corun
