// A graph's values as StarPU data handles: registered when the engine first meets the graph (after the plan
// step's passes), read and written through StarPU so that both wait for the tasks submitted so far, and
// unregistered on release, which hands the buffers back to the graph.
#include "engine/engine_impl.hpp"

#include "base/check.hpp"
#include "codelets/stable_buffers.hpp"
#include "engine/starpu_check.hpp"

#include <cstring>

namespace corun {

Engine::Impl::Bound& Engine::Impl::bind(Graph& graph, int home) {
  auto& g = graph.impl();
  if (home >= 0) {
    auto it = bound.find(&g);
    if (it != bound.end() && !it->second.handles.empty() && it->second.home != home) {
      unbind(g, it->second);
      bound.erase(it);
    }
  }
  // A graph the engine has not registered yet gets the plan step first: the passes change its nodes and
  // remove fused intermediates, which then get no handle (each pass runs once per graph).
  auto found = bound.find(&g);
  if ((found == bound.end() || found->second.handles.empty()) && !g.values.empty()) {
    auto done = planned.find(&g);
    const bool fresh = done != planned.end() && done->second == g.nodes.size();
    if (done != planned.end()) planned.erase(done);  // one binding's worth: the address may be reused later
    if (!fresh) plan_graph(graph);
    planned.erase(&g);
  }
  Bound& b = bound[&g];
  auto& handles = b.handles;
  if (handles.empty()) b.home = home >= 0 ? home : STARPU_MAIN_RAM;
  if (handles.empty() && !g.values.empty()) ++g.bound_engines;
  // Values added since the last run (e.g. after backward()) are registered too.
  for (size_t v = handles.size(); v < g.values.size(); ++v) {
    starpu_data_handle_t h = nullptr;
    if (g.values[v].fused_away) {  // no buffer and no task uses it: no handle
      handles.push_back(h);
      continue;
    }
    starpu_vector_data_register(&h, b.home, reinterpret_cast<uintptr_t>(g.values[v].data.get()),
                                static_cast<uint32_t>(g.values[v].shape.numel()), sizeof(float));
    handles.push_back(h);
  }
  mark_stable_buffers(g, b);
  return b;
}

void Engine::Impl::mark_stable_buffers(detail::GraphImpl& g, Bound& b) {
  if (b.stable_nodes == g.nodes.size()) return;
  for (const float* p : b.stable) codelets::unregister_stable_buffer(p);
  b.stable.clear();
  b.stable_nodes = g.nodes.size();
  // Only on main RAM: there the kernels get the graph's own buffers (a replica domain's handles may hand them
  // copies at other addresses, which would simply never match, but a write would stamp the wrong one).
  if (b.home != STARPU_MAIN_RAM) return;
  // A training graph's parameters and optimizer state change every step, and not only through its own nodes:
  // run_replicated's averaging and update tasks and the cross-rank reduction write them too. So only inference
  // graphs (no backward) have stable buffers.
  if (g.has_backward) return;
  std::vector<char> written(g.values.size(), 0);
  for (const auto& node : g.nodes)
    for (size_t k = 0; k < node.buffers.size(); ++k)
      if (node.call.modes[k] != codelets::Access::read) written[static_cast<size_t>(node.buffers[k])] = 1;
  for (size_t v = 0; v < g.values.size(); ++v) {
    if (written[v] || g.values[v].fused_away || g.values[v].data.get() == nullptr) continue;
    codelets::register_stable_buffer(g.values[v].data.get());
    b.stable.push_back(g.values[v].data.get());
  }
}

void Engine::Impl::unbind(detail::GraphImpl& g, Bound& b) {
  for (const float* p : b.stable) codelets::unregister_stable_buffer(p);
  b.stable.clear();
  b.stable_nodes = static_cast<size_t>(-1);
  auto& handles = b.handles;
  for (auto h : handles)
    if (h != nullptr) starpu_data_unregister(h);
  if (!handles.empty()) --g.bound_engines;  // bind() counted the graph only once it had handles
  handles.clear();
}

starpu_data_handle_t Engine::Impl::handle(Graph& graph, Tensor t, const char* what) {
  CORUN_CHECK(t.valid() && t.belongs_to(graph), Status::invalid_argument,
              what << ": the tensor is not from this graph");
  graph.impl().check_not_fused_away(t.id(), what);
  Bound& b = bind(graph);
  graph.impl().check_not_fused_away(t.id(), what);  // again: a first binding's plan step may have fused it away
  graph.impl().check_plain_layout(t.id(), what);
  return b.handles[static_cast<size_t>(t.id())];
}

void Engine::Impl::drop_mean_grads() {
  for (auto h : mean_grad_handles) starpu_data_unregister(h);
  mean_grad_handles.clear();
  mean_grads.clear();
}

// read and write take the engine's lock for the binding only: the acquire waits for the graph's tasks in
// flight, and other threads' submits must not wait behind it.
std::vector<float> Engine::read(Graph& graph, Tensor t) {
  starpu_data_handle_t h = nullptr;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    h = impl_->handle(graph, t, "Engine::read");
  }
  // On the handle's home node: that is where the graph's own buffer is (a replica's domain, or main RAM).
  const int home = starpu_data_get_home_node(h);
  starpu_check(starpu_data_acquire_on_node(h, home, STARPU_R), "starpu_data_acquire");
  const auto& v = graph.impl().values[static_cast<size_t>(t.id())];
  std::vector<float> out(v.data.get(), v.data.get() + v.shape.numel());
  starpu_data_release_on_node(h, home);
  return out;
}

void Engine::write(Graph& graph, Tensor t, const float* values, size_t count) {
  starpu_data_handle_t h = nullptr;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    h = impl_->handle(graph, t, "Engine::write");
  }
  auto& v = graph.impl().values[static_cast<size_t>(t.id())];
  CORUN_CHECK(static_cast<int64_t>(count) == v.shape.numel(), Status::invalid_argument,
              "Engine::write '" << v.name << "': got " << count << " floats for shape " << v.shape.str() << " ("
                                << v.shape.numel() << " floats)");
  const int home = starpu_data_get_home_node(h);
  starpu_check(starpu_data_acquire_on_node(h, home, STARPU_W), "starpu_data_acquire");
  std::memcpy(v.data.get(), values, count * sizeof(float));
  codelets::stamp_stable_buffer(v.data.get());  // before the release: no task reads it before the new stamp
  starpu_data_release_on_node(h, home);
}

void Engine::write(Graph& graph, Tensor t, const std::vector<float>& values) {
  write(graph, t, values.data(), values.size());
}

void Engine::release(Graph& graph) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->bound.find(&graph.impl());
  if (it == impl_->bound.end()) return;
  {
    std::lock_guard<std::mutex> flight(impl_->flight_mu);
    CORUN_CHECK(!it->second.running, Status::invalid_argument,
                "Engine::release: the graph has a submitted run in flight; wait() for it first");
  }
  impl_->unbind(graph.impl(), it->second);
  impl_->bound.erase(it);
}

}  // namespace corun
