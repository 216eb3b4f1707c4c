// Graph builder: every op checks its operands' shapes when the node is added, so a bad graph fails at
// build time with the op, the node and both shapes in the message, never inside a kernel.
#include <corun/graph.hpp>

#include "codelets/phased_gate/phased_gate.hpp"
#include "base/check.hpp"
#include "graphs/graph_impl.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace corun {

using codelets::Access;
using codelets::OpCall;
using codelets::OpKind;
using detail::GraphImpl;

namespace detail {

HostBuffer::HostBuffer(int64_t count) : n(count) {
  void* p = nullptr;
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float);
  const size_t rounded = (bytes + 63) / 64 * 64;
  if (posix_memalign(&p, 64, rounded) != 0 || p == nullptr)
    fail(Status::runtime_error, "out of memory allocating a tensor of " + std::to_string(count) + " floats");
  std::memset(p, 0, rounded);
  ptr.reset(static_cast<float*>(p));
}

int GraphImpl::add_value(const Shape& shape, std::string name, ValueKind kind) {
  const int id = static_cast<int>(values.size());
  values.push_back(Value{shape, std::move(name), kind, -1, HostBuffer(shape.numel())});
  grad_of.push_back(-1);
  return id;
}

std::string GraphImpl::node_name(const std::string& requested, const char* op) const {
  if (!requested.empty()) return requested;
  return std::string(op) + "_" + std::to_string(nodes.size());
}

namespace {
// The first node that writes a value produces it; parameters and optimizer state are only updated in place.
void claim_outputs(std::vector<Value>& values, const OpCall& call, const std::vector<int>& buffers, int node) {
  for (size_t b = 0; b < buffers.size(); ++b) {
    Value& v = values[static_cast<size_t>(buffers[b])];
    if (call.modes[b] != Access::read && v.producer < 0 && v.kind != ValueKind::param && v.kind != ValueKind::state)
      v.producer = node;
  }
}
}  // namespace

int GraphImpl::add_node(std::string name, OpCall call, std::vector<int> buffers, bool is_gradient) {
  CORUN_ASSERT(call.shapes.size() == buffers.size() && call.modes.size() == buffers.size());
  const int id = static_cast<int>(nodes.size());
  claim_outputs(values, call, buffers, id);
  nodes.push_back(Node{std::move(name), std::move(call), std::move(buffers), is_gradient});
  return id;
}

void GraphImpl::recompute_producers() {
  for (Value& v : values) v.producer = -1;
  for (size_t k = 0; k < nodes.size(); ++k) claim_outputs(values, nodes[k].call, nodes[k].buffers, static_cast<int>(k));
}

void GraphImpl::check_not_fused_away(int value, const char* what) const {
  const Value& v = values[static_cast<size_t>(value)];
  CORUN_CHECK(!v.fused_away, Status::invalid_argument,
              what << ": '" << v.name
                   << "' is an intermediate that Graph::fuse_elementwise() removed (it has no buffer); call "
                      "Graph::keep() on it before fusing to read it");
}

}  // namespace detail

namespace {

const char* op_name(OpKind k) { return codelets::op_info(k).name; }

// Throws the standard shape-mismatch error: op, node name, what is wrong, both shapes.
[[noreturn]] void shape_error(OpKind op, const std::string& node, const std::string& what, const char* a_label,
                              const Shape& a, const char* b_label, const Shape& b) {
  detail::fail(Status::invalid_argument, std::string(op_name(op)) + " '" + node + "': " + what + ": " + a_label +
                                             " " + a.str() + " vs " + b_label + " " + b.str());
}

Shape with_dim(const Shape& s, int dim, int64_t extent) {
  Shape r = s;
  r.dims[static_cast<size_t>(dim)] = extent;
  return r;
}

Shape without_dim(const Shape& s, int dim) {
  if (s.rank == 1) return Shape{1};
  Shape r;
  r.rank = s.rank - 1;
  for (int i = 0, j = 0; i < s.rank; ++i)
    if (i != dim) r.dims[static_cast<size_t>(j++)] = s[i];
  return r;
}

}  // namespace

Graph::Graph() : impl_(std::make_unique<GraphImpl>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

// ---------------------------------------------------------------------------------------------------
// Internal helpers of the builder (members of no class, they take the impl explicitly).
namespace {

void check_tensor(const GraphImpl& g, const Graph* self, Tensor t, const char* op, const std::string& node) {
  CORUN_CHECK(t.valid() && t.belongs_to(*self) && t.id() < static_cast<int>(g.values.size()),
              Status::invalid_argument,
              op << " '" << node << "': operand is not a tensor of this graph (default-constructed or from another graph)");
  g.check_not_fused_away(t.id(), op);
}

const Shape& shape_of(const GraphImpl& g, Tensor t) { return g.values[static_cast<size_t>(t.id())].shape; }

void check_dim(int dim, const Shape& s, OpKind op, const std::string& node) {
  CORUN_CHECK(dim >= 0 && dim < s.rank, Status::invalid_argument,
              op_name(op) << " '" << node << "': dimension " << dim << " is out of range for a tensor of shape " << s.str());
}

// Adds a node producing fresh output values (one per `out_shapes` entry), reading `ins`.
std::vector<Tensor> emit(Graph& self, GraphImpl& g, OpKind kind, const std::string& node, const std::vector<int>& ins,
                         const std::vector<Shape>& out_shapes, std::array<int64_t, codelets::kMaxIntAttrs> iattr,
                         float fattr, ValueKind out_kind, bool is_gradient) {
  OpCall call;
  call.kind = kind;
  call.i = iattr;
  call.f = fattr;
  std::vector<int> bufs;
  for (int v : ins) {
    call.shapes.push_back(g.values[static_cast<size_t>(v)].shape);
    call.modes.push_back(Access::read);
    bufs.push_back(v);
  }
  std::vector<Tensor> outs;
  for (size_t k = 0; k < out_shapes.size(); ++k) {
    const std::string vname = out_shapes.size() == 1 ? node : node + ":" + std::to_string(k);
    const int v = g.add_value(out_shapes[k], vname, out_kind);
    call.shapes.push_back(out_shapes[k]);
    call.modes.push_back(Access::write);
    bufs.push_back(v);
    outs.emplace_back(&g, v);
  }
  g.add_node(node, std::move(call), std::move(bufs), is_gradient);
  if (!is_gradient && outs.size() == 1 && !g.by_name.count(node)) g.by_name[node] = outs[0].id();
  return outs;
}

}  // namespace

Tensor Graph::input(const std::string& name, const Shape& shape) {
  CORUN_CHECK(!name.empty(), Status::invalid_argument, "input: a name is required");
  CORUN_CHECK(!impl_->by_name.count(name), Status::invalid_argument, "input '" << name << "': the name is already used");
  CORUN_CHECK(shape.rank >= 1, Status::invalid_argument, "input '" << name << "': empty shape");
  const int id = impl_->add_value(shape, name, ValueKind::input);
  impl_->by_name[name] = id;
  return Tensor(impl_.get(), id);
}

Tensor Graph::param(const std::string& name, const Shape& shape) {
  CORUN_CHECK(!name.empty(), Status::invalid_argument, "param: a name is required");
  CORUN_CHECK(!impl_->by_name.count(name), Status::invalid_argument, "param '" << name << "': the name is already used");
  CORUN_CHECK(shape.rank >= 1, Status::invalid_argument, "param '" << name << "': empty shape");
  CORUN_CHECK(!impl_->has_backward, Status::invalid_argument, "param '" << name << "': add parameters before backward()");
  const int id = impl_->add_value(shape, name, ValueKind::param);
  impl_->by_name[name] = id;
  return Tensor(impl_.get(), id);
}

Tensor Graph::matmul(Tensor a, Tensor b, bool trans_a, bool trans_b, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "matmul");
  check_tensor(g, this, a, "matmul", node);
  check_tensor(g, this, b, "matmul", node);
  const Shape sa = shape_of(g, a);
  const Shape sb = shape_of(g, b);
  if (sa.rank != 2 || sb.rank != 2) shape_error(OpKind::matmul, node, "operands must be 2-D", "A", sa, "B", sb);
  const int64_t m = trans_a ? sa[1] : sa[0];
  const int64_t ka = trans_a ? sa[0] : sa[1];
  const int64_t kb = trans_b ? sb[1] : sb[0];
  const int64_t n = trans_b ? sb[0] : sb[1];
  if (ka != kb) shape_error(OpKind::matmul, node, "inner dimensions differ", trans_a ? "A^T of" : "A", sa,
                            trans_b ? "B^T of" : "B", sb);
  return emit(*this, g, OpKind::matmul, node, {a.id(), b.id()}, {Shape{m, n}}, {trans_a, trans_b, 0, 0}, 0.0f,
              ValueKind::activation, false)[0];
}

namespace {
Tensor binary(Graph& self, GraphImpl& g, OpKind kind, Tensor a, Tensor b, const std::string& name, bool allow_bias) {
  const std::string node = g.node_name(name, op_name(kind));
  check_tensor(g, &self, a, op_name(kind), node);
  check_tensor(g, &self, b, op_name(kind), node);
  const Shape sa = shape_of(g, a);
  const Shape sb = shape_of(g, b);
  const bool same = sa == sb;
  const bool bias = allow_bias && sb.rank == 1 && sb[0] == sa[sa.rank - 1] && sa.rank > 1;
  if (!same && !bias)
    shape_error(kind, node,
                allow_bias ? "B must have A's shape or be 1-D of A's last extent" : "operands must have the same shape",
                "A", sa, "B", sb);
  return emit(self, g, kind, node, {a.id(), b.id()}, {sa}, {}, 0.0f, ValueKind::activation, false)[0];
}

Tensor unary(Graph& self, GraphImpl& g, OpKind kind, Tensor x, const std::string& name) {
  const std::string node = g.node_name(name, op_name(kind));
  check_tensor(g, &self, x, op_name(kind), node);
  return emit(self, g, kind, node, {x.id()}, {shape_of(g, x)}, {}, 0.0f, ValueKind::activation, false)[0];
}
}  // namespace

Tensor Graph::add(Tensor a, Tensor b, const std::string& name) { return binary(*this, *impl_, OpKind::add, a, b, name, true); }
Tensor Graph::sub(Tensor a, Tensor b, const std::string& name) { return binary(*this, *impl_, OpKind::sub, a, b, name, false); }
Tensor Graph::mul(Tensor a, Tensor b, const std::string& name) { return binary(*this, *impl_, OpKind::mul, a, b, name, false); }
Tensor Graph::sigmoid(Tensor x, const std::string& name) { return unary(*this, *impl_, OpKind::sigmoid, x, name); }
Tensor Graph::tanh(Tensor x, const std::string& name) { return unary(*this, *impl_, OpKind::tanh, x, name); }
Tensor Graph::relu(Tensor x, const std::string& name) { return unary(*this, *impl_, OpKind::relu, x, name); }

Tensor Graph::concat(const std::vector<Tensor>& xs, int dim, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "concat");
  CORUN_CHECK(!xs.empty(), Status::invalid_argument, "concat '" << node << "': no operands");
  for (Tensor x : xs) check_tensor(g, this, x, "concat", node);
  const Shape s0 = shape_of(g, xs[0]);
  check_dim(dim, s0, OpKind::concat, node);
  int64_t total = 0;
  std::vector<int> ids;
  for (Tensor x : xs) {
    const Shape s = shape_of(g, x);
    if (s.rank != s0.rank || with_dim(s, dim, 1) != with_dim(s0, dim, 1))
      shape_error(OpKind::concat, node, "extents other than dimension " + std::to_string(dim) + " differ",
                  "first operand", s0, "operand", s);
    total += s[dim];
    ids.push_back(x.id());
  }
  return emit(*this, g, OpKind::concat, node, ids, {with_dim(s0, dim, total)}, {dim, 0, 0, 0}, 0.0f,
              ValueKind::activation, false)[0];
}

std::vector<Tensor> Graph::split(Tensor x, int dim, const std::vector<int64_t>& sizes, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "split");
  check_tensor(g, this, x, "split", node);
  const Shape s = shape_of(g, x);
  check_dim(dim, s, OpKind::split, node);
  CORUN_CHECK(!sizes.empty(), Status::invalid_argument, "split '" << node << "': no piece sizes given");
  int64_t total = 0;
  std::vector<Shape> outs;
  for (int64_t n : sizes) {
    CORUN_CHECK(n > 0, Status::invalid_argument, "split '" << node << "': piece sizes must be positive, got " << n);
    total += n;
    outs.push_back(with_dim(s, dim, n));
  }
  if (total != s[dim])
    shape_error(OpKind::split, node,
                "piece sizes add up to " + std::to_string(total) + ", not the extent of dimension " + std::to_string(dim),
                "X", s, "pieces stacked", with_dim(s, dim, total));
  return emit(*this, g, OpKind::split, node, {x.id()}, outs, {dim, 0, 0, 0}, 0.0f, ValueKind::activation, false);
}

Tensor Graph::slice(Tensor x, int dim, int64_t start, int64_t len, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "slice");
  check_tensor(g, this, x, "slice", node);
  const Shape s = shape_of(g, x);
  check_dim(dim, s, OpKind::slice, node);
  if (start < 0 || len <= 0 || start + len > s[dim])
    detail::fail(Status::invalid_argument, "slice '" + node + "': range [" + std::to_string(start) + ", " +
                                               std::to_string(start + len) + ") is outside dimension " +
                                               std::to_string(dim) + " of X " + s.str());
  return emit(*this, g, OpKind::slice, node, {x.id()}, {with_dim(s, dim, len)}, {dim, start, len, 0}, 0.0f,
              ValueKind::activation, false)[0];
}

Tensor Graph::sum(Tensor x, int dim, float scale, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "sum");
  check_tensor(g, this, x, "sum", node);
  const Shape s = shape_of(g, x);
  check_dim(dim, s, OpKind::sum, node);
  return emit(*this, g, OpKind::sum, node, {x.id()}, {without_dim(s, dim)}, {dim, 0, 0, 0}, scale,
              ValueKind::activation, false)[0];
}

std::pair<Tensor, Tensor> Graph::lstm_cell(Tensor gates, Tensor c_prev, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "lstm_cell");
  check_tensor(g, this, gates, "lstm_cell", node);
  check_tensor(g, this, c_prev, "lstm_cell", node);
  const Shape sz = shape_of(g, gates);
  const Shape sc = shape_of(g, c_prev);
  if (sc.rank != 2)
    shape_error(OpKind::lstm_cell, node, "the cell state must be 2-D [batch, hidden]", "gates", sz, "c_prev", sc);
  if (sz.rank != 2 || sz[0] != sc[0] || sz[1] != 4 * sc[1])
    shape_error(OpKind::lstm_cell, node, "gates must be [batch, 4 * hidden] for a cell state [batch, hidden]", "gates",
                sz, "c_prev", sc);
  // Outputs C, H, then the activated gates and tanh(C), which only the backward reads.
  auto outs = emit(*this, g, OpKind::lstm_cell, node, {gates.id(), c_prev.id()}, {sc, sc, sz, sc}, {}, 0.0f,
                   ValueKind::activation, false);
  const char* suffix[] = {".c", ".h", ".act", ".tanh_c"};
  for (size_t k = 0; k < outs.size(); ++k) g.values[static_cast<size_t>(outs[k].id())].name = node + suffix[k];
  for (size_t k = 0; k < 2; ++k)
    if (!g.by_name.count(node + suffix[k])) g.by_name[node + suffix[k]] = outs[k].id();
  return {outs[1], outs[0]};
}

namespace {
void check_nchw(OpKind op, const std::string& node, const char* what, const Shape& s) {
  CORUN_CHECK(s.rank == 4, Status::invalid_argument,
              op_name(op) << " '" << node << "': " << what << " must be 4-D [N, C, H, W], got " << s.str());
}

void check_window(OpKind op, const std::string& node, int window, int stride, int pad) {
  CORUN_CHECK(window >= 1 && stride >= 1 && pad >= 0 && pad < window, Status::invalid_argument,
              op_name(op) << " '" << node << "': need window >= 1, stride >= 1 and 0 <= pad < window, got window "
                          << window << ", stride " << stride << ", pad " << pad);
}

int64_t out_extent(OpKind op, const std::string& node, const Shape& x, int64_t in, int window, int stride, int pad) {
  const int64_t span = in + 2 * pad - window;
  CORUN_CHECK(span >= 0, Status::invalid_argument,
              op_name(op) << " '" << node << "': a window of " << window << " with padding " << pad
                          << " does not fit the input " << x.str() << "; use a smaller window or more padding");
  return span / stride + 1;
}

Tensor pool(Graph& self, GraphImpl& g, OpKind kind, Tensor x, int kernel, int stride, int pad, const std::string& name) {
  const std::string node = g.node_name(name, op_name(kind));
  check_tensor(g, &self, x, op_name(kind), node);
  const Shape s = shape_of(g, x);
  check_nchw(kind, node, "X", s);
  check_window(kind, node, kernel, stride, pad);
  const Shape y{s[0], s[1], out_extent(kind, node, s, s[2], kernel, stride, pad),
                out_extent(kind, node, s, s[3], kernel, stride, pad)};
  return emit(self, g, kind, node, {x.id()}, {y}, {kernel, stride, pad, 0}, 0.0f, ValueKind::activation, false)[0];
}
}  // namespace

Tensor Graph::conv2d(Tensor x, Tensor w, Tensor b, int stride, int pad, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "conv2d");
  for (Tensor t : {x, w, b}) check_tensor(g, this, t, "conv2d", node);
  const Shape sx = shape_of(g, x), sw = shape_of(g, w), sb = shape_of(g, b);
  check_nchw(OpKind::conv2d, node, "X", sx);
  if (sw.rank != 4 || sw[1] != sx[1])
    shape_error(OpKind::conv2d, node, "filters must be [K, C, R, S] with C the input's channels", "X", sx, "W", sw);
  if (sb.rank != 1 || sb[0] != sw[0])
    shape_error(OpKind::conv2d, node, "the bias must be [K], one per filter", "W", sw, "B", sb);
  CORUN_CHECK(stride >= 1 && pad >= 0, Status::invalid_argument,
              "conv2d '" << node << "': need stride >= 1 and pad >= 0, got stride " << stride << ", pad " << pad);
  const Shape y{sx[0], sw[0], out_extent(OpKind::conv2d, node, sx, sx[2], static_cast<int>(sw[2]), stride, pad),
                out_extent(OpKind::conv2d, node, sx, sx[3], static_cast<int>(sw[3]), stride, pad)};
  return emit(*this, g, OpKind::conv2d, node, {x.id(), w.id(), b.id()}, {y}, {stride, pad, 0, 0}, 0.0f,
              ValueKind::activation, false)[0];
}

Tensor Graph::max_pool(Tensor x, int kernel, int stride, int pad, const std::string& name) {
  return pool(*this, *impl_, OpKind::max_pool, x, kernel, stride, pad, name);
}

Tensor Graph::avg_pool(Tensor x, int kernel, int stride, int pad, const std::string& name) {
  return pool(*this, *impl_, OpKind::avg_pool, x, kernel, stride, pad, name);
}

Tensor Graph::add_n(const std::vector<Tensor>& xs, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "add_n");
  CORUN_CHECK(!xs.empty(), Status::invalid_argument, "add_n '" << node << "': no operands");
  std::vector<int> ids;
  for (Tensor x : xs) {
    check_tensor(g, this, x, "add_n", node);
    if (shape_of(g, x) != shape_of(g, xs[0]))
      shape_error(OpKind::add_n, node, "operands must have the same shape", "first operand", shape_of(g, xs[0]),
                  "operand", shape_of(g, x));
    ids.push_back(x.id());
  }
  return emit(*this, g, OpKind::add_n, node, ids, {shape_of(g, xs[0])}, {}, 0.0f, ValueKind::activation, false)[0];
}

Tensor Graph::reshape(Tensor x, const Shape& shape, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "reshape");
  check_tensor(g, this, x, "reshape", node);
  const Shape s = shape_of(g, x);
  if (shape.rank < 1 || shape.numel() != s.numel())
    shape_error(OpKind::reshape, node, "the element counts differ", "X", s, "new shape", shape);
  return emit(*this, g, OpKind::reshape, node, {x.id()}, {shape}, {}, 0.0f, ValueKind::activation, false)[0];
}

Tensor Graph::softmax_xent(Tensor logits, Tensor targets, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "softmax_xent");
  check_tensor(g, this, logits, "softmax_xent", node);
  check_tensor(g, this, targets, "softmax_xent", node);
  const Shape sz = shape_of(g, logits);
  const Shape st = shape_of(g, targets);
  if (sz.rank != 2) shape_error(OpKind::softmax_xent, node, "logits must be 2-D [batch, classes]", "logits", sz, "targets", st);
  if (sz != st) shape_error(OpKind::softmax_xent, node, "logits and targets differ", "logits", sz, "targets", st);
  // Two outputs: the softmax (kept for the backward) and one loss per row; the mean over rows is a
  // separate sum node, so the row split of the SPMD kernel never splits a reduction.
  auto outs = emit(*this, g, OpKind::softmax_xent, node + ".rows", {logits.id(), targets.id()}, {sz, Shape{sz[0]}},
                   {}, 0.0f, ValueKind::activation, false);
  return sum(outs[1], 0, 1.0f / static_cast<float>(sz[0]), node);
}

Tensor Graph::embedding(Tensor table, Tensor indices, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "embedding");
  check_tensor(g, this, table, "embedding", node);
  check_tensor(g, this, indices, "embedding", node);
  const Shape st = shape_of(g, table);
  const Shape si = shape_of(g, indices);
  if (st.rank != 2) shape_error(OpKind::embedding, node, "the table must be 2-D [vocabulary, dim]", "table", st, "indices", si);
  CORUN_CHECK(st[0] <= (int64_t{1} << 24), Status::invalid_argument,
              "embedding '" << node << "': a vocabulary of " << st[0]
                            << " rows is above 2^24, the largest whose indices f32 holds exactly; split the table");
  // Buffers idx, T -> Y (the kernel's order); the builder takes (table, indices) like a matmul's (W, x).
  return emit(*this, g, OpKind::embedding, node, {indices.id(), table.id()}, {Shape{si.numel(), st[1]}}, {}, 0.0f,
              ValueKind::activation, false)[0];
}

Tensor Graph::reduce_sum(Tensor x, float scale, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "reduce_sum");
  check_tensor(g, this, x, "reduce_sum", node);
  return emit(*this, g, OpKind::reduce_sum, node, {x.id()}, {Shape{1}}, {}, scale, ValueKind::activation, false)[0];
}

Tensor Graph::logistic_xent(Tensor logits, Tensor targets, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "logistic_xent");
  check_tensor(g, this, logits, "logistic_xent", node);
  check_tensor(g, this, targets, "logistic_xent", node);
  const Shape sz = shape_of(g, logits);
  const Shape st = shape_of(g, targets);
  if (sz != st) shape_error(OpKind::logistic_xent, node, "logits and targets differ", "logits", sz, "targets", st);
  // Elementwise losses, then their mean as a separate single-member reduction.
  const Tensor per = emit(*this, g, OpKind::logistic_xent, node + ".elems", {logits.id(), targets.id()}, {sz}, {},
                          0.0f, ValueKind::activation, false)[0];
  return reduce_sum(per, 1.0f / static_cast<float>(sz.numel()), node);
}

Tensor Graph::phased_gate(Tensor time, Tensor tau, Tensor shift, float r_on, float alpha, const std::string& name) {
  GraphImpl& g = *impl_;
  const std::string node = g.node_name(name, "phased_gate");
  for (Tensor t : {time, tau, shift}) check_tensor(g, this, t, "phased_gate", node);
  const Shape st = shape_of(g, time), sp = shape_of(g, tau), ss = shape_of(g, shift);
  if (st.rank != 1) shape_error(OpKind::phased_gate, node, "timestamps must be 1-D [batch]", "time", st, "tau", sp);
  if (sp.rank != 1 || sp != ss)
    shape_error(OpKind::phased_gate, node, "periods and shifts must both be 1-D [hidden]", "tau", sp, "shift", ss);
  CORUN_CHECK(r_on > 0.0f && r_on <= 1.0f && alpha >= 0.0f && alpha <= 1.0f, Status::invalid_argument,
              "phased_gate '" << node << "': r_on must be in (0, 1] and alpha in [0, 1], got r_on=" << r_on
                              << " alpha=" << alpha);
  return emit(*this, g, OpKind::phased_gate, node, {time.id(), tau.id(), shift.id()}, {Shape{st[0], sp[0]}},
              {codelets::phased_gate_alpha_bits(alpha), 0, 0, 0}, r_on, ValueKind::activation, false)[0];
}

// ---------------------------------------------------------------------------------------------------

int Graph::num_values() const { return static_cast<int>(impl_->values.size()); }
int Graph::num_nodes() const { return static_cast<int>(impl_->nodes.size()); }

Tensor Graph::value(int id) const {
  CORUN_CHECK(id >= 0 && id < num_values(), Status::invalid_argument, "value id " << id << " out of range");
  return Tensor(impl_.get(), id);
}

ValueKind Graph::kind(Tensor t) const {
  check_tensor(*impl_, this, t, "kind", "-");
  return impl_->values[static_cast<size_t>(t.id())].kind;
}

std::vector<Tensor> Graph::inputs() const {
  std::vector<Tensor> r;
  for (size_t i = 0; i < impl_->values.size(); ++i)
    if (impl_->values[i].kind == ValueKind::input) r.emplace_back(impl_.get(), static_cast<int>(i));
  return r;
}

std::vector<Tensor> Graph::params() const {
  std::vector<Tensor> r;
  for (size_t i = 0; i < impl_->values.size(); ++i)
    if (impl_->values[i].kind == ValueKind::param) r.emplace_back(impl_.get(), static_cast<int>(i));
  return r;
}

std::vector<Tensor> Graph::optimizer_state() const {
  std::vector<Tensor> r;
  for (size_t i = 0; i < impl_->values.size(); ++i)
    if (impl_->values[i].kind == ValueKind::state) r.emplace_back(impl_.get(), static_cast<int>(i));
  return r;
}

Tensor Graph::find(const std::string& name) const {
  auto it = impl_->by_name.find(name);
  CORUN_CHECK(it != impl_->by_name.end(), Status::invalid_argument, "no tensor named '" << name << "' in the graph");
  return Tensor(impl_.get(), it->second);
}

Tensor Graph::grad(Tensor t) const {
  check_tensor(*impl_, this, t, "grad", "-");
  const int gid = impl_->grad_of[static_cast<size_t>(t.id())];
  return gid < 0 ? Tensor() : Tensor(impl_.get(), gid);
}

void Graph::keep(Tensor t) {
  check_tensor(*impl_, this, t, "keep", "-");
  impl_->values[static_cast<size_t>(t.id())].kept = true;
}

void Graph::set_learning_rate(float learning_rate) {
  CORUN_CHECK(learning_rate > 0.0f, Status::invalid_argument, "learning rate must be positive, got " << learning_rate);
  for (auto& n : impl_->nodes)
    if (n.call.kind == OpKind::sgd || n.call.kind == OpKind::sgd_momentum) n.call.f = learning_rate;
}

float* Graph::data(Tensor t) {
  check_tensor(*impl_, this, t, "data", "-");
  CORUN_CHECK(impl_->bound_engines == 0, Status::invalid_argument,
              "tensor '" << t.name() << "': the graph is bound to an Engine; use Engine::read / Engine::write");
  return impl_->values[static_cast<size_t>(t.id())].data.get();
}

const float* Graph::data(Tensor t) const {
  check_tensor(*impl_, this, t, "data", "-");
  CORUN_CHECK(impl_->bound_engines == 0, Status::invalid_argument,
              "tensor '" << t.name() << "': the graph is bound to an Engine; use Engine::read / Engine::write");
  return impl_->values[static_cast<size_t>(t.id())].data.get();
}

bool Tensor::belongs_to(const Graph& graph) const { return owner_ != nullptr && owner_ == &graph.impl(); }

const Shape& Tensor::shape() const {
  CORUN_CHECK(valid(), Status::invalid_argument, "shape() of an invalid tensor");
  return owner_->values[static_cast<size_t>(id_)].shape;
}

const std::string& Tensor::name() const {
  CORUN_CHECK(valid(), Status::invalid_argument, "name() of an invalid tensor");
  return owner_->values[static_cast<size_t>(id_)].name;
}

}  // namespace corun
