// Graph::fold_batch_norm: an inference-mode batch_norm whose input is a conv2d's output (and nothing else's
// input) becomes part of that convolution: with a = scale / sqrt(running_var + eps) per output channel,
// W'[k] = a[k] W[k] and b'[k] = a[k] (b[k] - running_mean[k]) + bias[k], so conv'(x) = batch_norm(conv(x)).
// One task and one pass over the activations fewer per folded pair; the numbers differ from the unfolded
// graph by rounding only. A convolution without a bias (torchvision's, before every BatchNorm) gets one: a
// constant [K] value named "<batch_norm>.folded_bias" that holds b'. The weights are rewritten in their host buffers, so the pass runs on a graph
// whose parameters already hold their final values and that will not be trained.
#include <corun/graph.hpp>

#include "graphs/graph_impl.hpp"
#include "graphs/passes/inference_pass.hpp"
#include "graphs/passes/uses.hpp"

#include <cmath>
#include <vector>

namespace corun {
namespace {

using codelets::Access;
using codelets::OpKind;
using detail::GraphImpl;
using detail::Node;
using detail::Uses;

// Whether node `bn` (an inference batch_norm) can be folded into node `conv`.
bool foldable(const GraphImpl& g, const Uses& u, const Node& bn, int conv) {
  if (bn.call.kind != OpKind::batch_norm || bn.call.i[0] != 0 || conv < 0) return false;
  const Node& c = g.nodes[static_cast<size_t>(conv)];
  if (c.call.kind != OpKind::conv2d || c.buffers.back() != bn.buffers[0]) return false;
  const auto val = [&](int v) -> const detail::Value& { return g.values[static_cast<size_t>(v)]; };
  // The conv output feeds this batch_norm alone; the statistics outputs are unused.
  if (val(c.buffers.back()).kept || u.readers[static_cast<size_t>(c.buffers.back())] != 1) return false;
  for (int k : {6, 7}) {
    const int v = bn.buffers[static_cast<size_t>(k)];
    if (val(v).kept || u.readers[static_cast<size_t>(v)] != 0) return false;
  }
  // The weights and bias belong to this convolution alone and no node changes them.
  for (size_t k = 1; k + 1 < c.buffers.size(); ++k) {
    const int v = c.buffers[k];
    if (u.readers[static_cast<size_t>(v)] != 1 || u.writers[static_cast<size_t>(v)] != 0 || val(v).producer >= 0)
      return false;
  }
  // The batch_norm's scale, bias and statistics are leaves (their host buffers hold their values).
  for (int k = 1; k <= 4; ++k)
    if (val(bn.buffers[static_cast<size_t>(k)]).producer >= 0) return false;
  return true;
}

void fold(GraphImpl& g, const Node& bn, Node& conv) {
  if (conv.buffers.size() == 3) {  // no bias yet: a zero one, inserted where conv2d takes it (X, W, B, Y)
    const Shape sb{conv.call.shapes[1][0]};
    const int b = g.add_value(sb, bn.name + ".folded_bias", ValueKind::constant);
    conv.buffers.insert(conv.buffers.begin() + 2, b);
    conv.call.shapes.insert(conv.call.shapes.begin() + 2, sb);
    conv.call.modes.insert(conv.call.modes.begin() + 2, Access::read);
  }
  const auto data = [&](int k_of_bn) {
    return g.values[static_cast<size_t>(bn.buffers[static_cast<size_t>(k_of_bn)])].data.get();
  };
  const float *scale = data(1), *bias = data(2), *mean = data(3), *var = data(4);
  float* w = g.values[static_cast<size_t>(conv.buffers[1])].data.get();
  float* b = g.values[static_cast<size_t>(conv.buffers[2])].data.get();
  const Shape& sw = conv.call.shapes[1];
  const int64_t per_filter = sw.numel() / sw[0];
  for (int64_t k = 0; k < sw[0]; ++k) {
    const double a = scale[k] / std::sqrt(static_cast<double>(var[k]) + static_cast<double>(bn.call.f));
    for (int64_t e = 0; e < per_filter; ++e) w[k * per_filter + e] = static_cast<float>(a * w[k * per_filter + e]);
    b[k] = static_cast<float>(a * (static_cast<double>(b[k]) - mean[k]) + bias[k]);
  }
  // The convolution now writes the batch_norm's output; its own output and the statistics disappear.
  for (int v : {conv.buffers[3], bn.buffers[6], bn.buffers[7]}) {
    g.values[static_cast<size_t>(v)].fused_away = true;
    g.values[static_cast<size_t>(v)].data = detail::HostBuffer(0);
  }
  conv.buffers[3] = bn.buffers[5];
}

}  // namespace

int Graph::fold_batch_norm() {
  GraphImpl& g = *impl_;
  detail::check_inference_pass(g, "fold_batch_norm", "fold",
                               "; folding rewrites the convolution weights, so it is for inference graphs only (fold "
                               "before building a training graph's backward, or not at all)");
  const Uses uses = Uses::of(g);
  std::vector<Node> out;
  int folded = 0;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    const int producer = n.buffers.empty() ? -1 : g.values[static_cast<size_t>(n.buffers[0])].producer;
    if (n.call.kind == OpKind::batch_norm && foldable(g, uses, n, producer)) {
      // The convolution is already in `out` (it precedes its reader); find it by name, which is unique.
      for (Node& c : out)
        if (c.name == g.nodes[static_cast<size_t>(producer)].name) fold(g, n, c);
      ++folded;
      continue;
    }
    out.push_back(n);
  }
  if (folded == 0) return 0;
  g.nodes = std::move(out);
  g.recompute_producers();
  return folded;
}

}  // namespace corun
