// The graph and its one node-building path, build(): every op checks its operands' shapes through its
// shape rule (graphs/ops/<op>.cpp) when the node is added, so a bad graph fails at build time with the op,
// the node and both shapes in the message, never inside a kernel. The ops' public builders live with their
// rules in graphs/ops/.
#include <corun/graph.hpp>

#include "base/check.hpp"
#include "base/memory_budget.hpp"
#include "graphs/graph_impl.hpp"
#include "codelets/optimizer_hyper.hpp"
#include "graphs/ops/rules.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>

namespace corun {

using codelets::Access;
using codelets::OpCall;
using codelets::OpKind;
using detail::GraphImpl;

namespace detail {

namespace {
// The bytes of every live HostBuffer of the process, and the cap set_tensor_memory_limit put on them.
std::atomic<double> g_tensor_bytes{0};
std::mutex g_limit_mutex;
double g_limit = std::numeric_limits<double>::infinity();
std::string g_limit_source, g_limit_hint;

void check_tensor_limit(size_t bytes, const std::string& name, int64_t count) {
  const std::lock_guard<std::mutex> lock(g_limit_mutex);
  const double total = g_tensor_bytes.load() + static_cast<double>(bytes);
  if (total <= g_limit) return;
  fail(Status::invalid_config, "the tensor '" + name + "' (" + std::to_string(count) + " floats) would bring the " +
                                   "model's tensors to " + human_bytes(total) + ", more than the " +
                                   human_bytes(g_limit) + " available (" + g_limit_source + "); " + g_limit_hint);
}
}  // namespace

void HostBuffer::Free::operator()(float* p) const {
  g_tensor_bytes -= static_cast<double>(bytes);
  std::free(p);
}

HostBuffer::HostBuffer(int64_t count, const std::string& name) : n(count) {
  void* p = nullptr;
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(float);
  const size_t rounded = (bytes + 63) / 64 * 64;
  if (count > 0) check_tensor_limit(rounded, name, count);  // before the allocation: zero-filling commits it
  if (posix_memalign(&p, 64, rounded) != 0 || p == nullptr)
    fail(Status::runtime_error, "out of memory allocating a tensor of " + std::to_string(count) + " floats");
  std::memset(p, 0, rounded);
  g_tensor_bytes += static_cast<double>(rounded);
  ptr = std::unique_ptr<float, Free>(static_cast<float*>(p), Free{rounded});
}

}  // namespace detail

void set_tensor_memory_limit(double bytes, const std::string& source, const std::string& hint) {
  const std::lock_guard<std::mutex> lock(detail::g_limit_mutex);
  detail::g_limit = detail::g_tensor_bytes.load() + bytes;
  detail::g_limit_source = source;
  detail::g_limit_hint = hint;
}

namespace detail {

int GraphImpl::add_value(const Shape& shape, std::string name, ValueKind kind) {
  const int id = static_cast<int>(values.size());
  HostBuffer data(shape.numel(), name);
  values.push_back(Value{shape, std::move(name), kind, -1, std::move(data)});
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

void GraphImpl::check_plain_layout(int value, const char* what) const {
  const Value& v = values[static_cast<size_t>(value)];
  CORUN_CHECK(v.channel_block == 0, Status::invalid_argument,
              what << ": '" << v.name << "' is an intermediate that Graph::block_layouts() keeps in the blocked layout "
                   << "nChw" << v.channel_block << "c between convolutions, not NCHW; call Graph::keep() on it before "
                   << "block_layouts() to read or write it");
}

}  // namespace detail

Graph::Graph() : impl_(std::make_unique<GraphImpl>()) {}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

namespace {

void check_tensor(const GraphImpl& g, const Graph* self, Tensor t, const char* op, const std::string& node) {
  CORUN_CHECK(t.valid() && t.belongs_to(*self) && t.id() < static_cast<int>(g.values.size()),
              Status::invalid_argument,
              op << " '" << node << "': operand is not a tensor of this graph (default-constructed or from another graph)");
  g.check_not_fused_away(t.id(), op);
}

}  // namespace

namespace graphs {

void ShapeQuery::mismatch(const std::string& what, const char* a_label, const Shape& a, const char* b_label,
                          const Shape& b) const {
  fail(what + ": " + a_label + " " + a.str() + " vs " + b_label + " " + b.str());
}

void ShapeQuery::fail(const std::string& what) const {
  detail::fail(Status::invalid_argument, std::string(codelets::op_info(kind).name) + " '" + node + "': " + what);
}

void ShapeQuery::check_dim(int dim, const Shape& s) const {
  if (dim < 0 || dim >= s.rank)
    fail("dimension " + std::to_string(dim) + " is out of range for a tensor of shape " + s.str());
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

std::vector<Tensor> build(Graph& graph, OpKind kind, const NodeArgs& args, const std::string& name,
                          const char* suffix) {
  GraphImpl& g = graph.impl();
  const char* op = codelets::op_info(kind).name;
  const OpRules* rules = op_rules(kind);
  CORUN_ASSERT(rules != nullptr && rules->shapes != nullptr);
  const std::string node = g.node_name(name, op);
  std::vector<Shape> in;
  for (Tensor t : args.operands) {
    check_tensor(g, &graph, t, op, node);
    in.push_back(g.values[static_cast<size_t>(t.id())].shape);
  }
  const std::vector<Shape> out_shapes = rules->shapes(ShapeQuery{kind, node, in, args.i, args.f, args.extents});

  OpCall call;
  call.kind = kind;
  call.i = args.i;
  call.f = args.f;
  std::vector<int> bufs;
  for (size_t k = 0; k < in.size(); ++k) {
    call.shapes.push_back(in[k]);
    call.modes.push_back(Access::read);
    bufs.push_back(args.operands[k].id());
  }
  const std::string emitted = node + suffix;
  std::vector<Tensor> outs;
  for (size_t k = 0; k < out_shapes.size(); ++k) {
    const std::string vname = out_shapes.size() == 1 ? emitted : emitted + ":" + std::to_string(k);
    const int v = g.add_value(out_shapes[k], vname, ValueKind::activation);
    call.shapes.push_back(out_shapes[k]);
    call.modes.push_back(Access::write);
    bufs.push_back(v);
    outs.emplace_back(&g, v);
  }
  g.add_node(emitted, std::move(call), std::move(bufs), false);
  if (outs.size() == 1 && !g.by_name.count(emitted)) g.by_name[emitted] = outs[0].id();
  return outs;
}

}  // namespace graphs

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

Tensor Graph::constant(const std::string& name, const Shape& shape, float fill) {
  CORUN_CHECK(shape.rank >= 1, Status::invalid_argument, "constant '" << name << "': empty shape");
  const int id = impl_->add_value(shape, name, ValueKind::constant);
  std::fill_n(impl_->values[static_cast<size_t>(id)].data.get(), shape.numel(), fill);
  return Tensor(impl_.get(), id);
}

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

bool Graph::has(const std::string& name) const { return impl_->by_name.count(name) > 0; }

void Graph::add_name(Tensor t, const std::string& name) {
  check_tensor(*impl_, this, t, "add_name", name);
  CORUN_CHECK(!name.empty(), Status::invalid_argument, "add_name: a name is required");
  const auto it = impl_->by_name.find(name);
  CORUN_CHECK(it == impl_->by_name.end(), Status::invalid_argument,
              "add_name: '" << name << "' already names value '" << impl_->values[static_cast<size_t>(it->second)].name
                            << "'");
  impl_->by_name[name] = t.id();
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
  const auto update = [&](codelets::OpCall& call) {
    if (call.kind == OpKind::sgd || call.kind == OpKind::sgd_momentum) call.f = learning_rate;
  };
  for (auto& n : impl_->nodes) {
    update(n.call);
    for (codelets::OpCall& member : n.call.members) update(member);  // updates inside a parallel-op group
  }
}

Tensor Graph::optimizer_hyper() const {
  return impl_->optimizer_hyper < 0 ? Tensor() : Tensor(impl_.get(), impl_->optimizer_hyper);
}

std::vector<float> Graph::optimizer_hyper_at(int64_t step, float learning_rate) const {
  // sgd_wd reads only the rate: betas of 0 make the other slots harmless constants.
  const bool adam = impl_->hyper_options.optimizer != Optimizer::sgd;
  const auto beta = [adam](float b) { return adam ? static_cast<double>(b) : 0.0; };
  CORUN_CHECK(step >= 1, Status::invalid_argument, "optimizer_hyper_at: the step is 1-based, got " << step);
  CORUN_CHECK(learning_rate > 0.0f, Status::invalid_argument, "learning rate must be positive, got " << learning_rate);
  std::vector<float> h(codelets::kHyperCount);
  codelets::fill_optimizer_hyper(h.data(), step, learning_rate, beta(impl_->hyper_options.beta1),
                                 beta(impl_->hyper_options.beta2));
  return h;
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
