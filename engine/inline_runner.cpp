// InlineRunner (corun/inline.hpp): a graph's kernels on the calling thread, in node order, at width 1.
#include <corun/inline.hpp>

#include "codelets/op.hpp"
#include "base/check.hpp"
#include "engine/blas.hpp"
#include "engine/conv_kernel.hpp"
#include "graphs/graph_impl.hpp"

#include <vector>

namespace corun {

struct InlineRunner::Impl {
  detail::GraphImpl* g = nullptr;
  size_t nodes = 0, values = 0;           // the graph's shape when the runner was made
  std::vector<codelets::Kernel> kernels;  // per node
  std::vector<const codelets::OpCall*> calls;
  std::vector<float*> ptrs;               // every node's buffer pointers, back to back
  std::vector<size_t> first;              // per node: its first pointer in `ptrs`

  void check_runnable(const char* what) const {
    CORUN_CHECK(g->bound_engines == 0, Status::invalid_argument,
                what << ": the graph is bound to an Engine, so StarPU may hold the valid copy of its values; call "
                        "Engine::release(graph) first, or run it with Engine::run");
    CORUN_CHECK(g->nodes.size() == nodes && g->values.size() == values, Status::invalid_argument,
                what << ": the graph changed since the InlineRunner was made (" << nodes << " nodes, " << values
                     << " values; now " << g->nodes.size() << ", " << g->values.size() << "); make a new runner");
  }
};

InlineRunner::InlineRunner(Graph& graph, bool ref_kernels) : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.g = &graph.impl();
  im.nodes = im.g->nodes.size();
  im.values = im.g->values.size();
  im.check_runnable("InlineRunner");
  blas::pin_single_thread();  // as under the Engine: no BLAS thread pool behind the caller's back
  // The Engine's kernels, same bits: what the plan step chose, or CORUN_CONV_KERNEL's and CORUN_GEMM_KERNEL's choice.
  engine::choose_kernels(graph, engine::kernel_preferences_from_env(), false);
  im.kernels.reserve(im.nodes);
  im.calls.reserve(im.nodes);
  im.first.reserve(im.nodes);
  for (const detail::Node& n : im.g->nodes) {
    const codelets::OpInfo& info = codelets::op_info(n.call.kind);
    const codelets::Kernel k = ref_kernels ? info.ref : info.fast;
    CORUN_CHECK(k != nullptr, Status::invalid_argument,
                "InlineRunner: node '" << n.name << "' (" << info.name << ") has no " << (ref_kernels ? "reference" : "fast")
                                       << " kernel");
    im.kernels.push_back(k);
    im.calls.push_back(&n.call);
    im.first.push_back(im.ptrs.size());
    for (int v : n.buffers) {
      float* p = im.g->values[static_cast<size_t>(v)].data.get();
      CORUN_CHECK(p != nullptr, Status::invalid_argument,
                  "InlineRunner: node '" << n.name << "' uses value '" << im.g->values[static_cast<size_t>(v)].name
                                         << "', which has no buffer");
      im.ptrs.push_back(p);
    }
  }
}

InlineRunner::~InlineRunner() = default;

void InlineRunner::run() {
  const Impl& im = *impl_;
  im.check_runnable("InlineRunner::run");
  for (size_t k = 0; k < im.nodes; ++k) im.kernels[k](*im.calls[k], im.ptrs.data() + im.first[k], 0, 1);
}

int InlineRunner::nodes() const { return static_cast<int>(impl_->nodes); }

}  // namespace corun
