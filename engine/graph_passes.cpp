// The plan step: the graph passes a Config asks for, run on a graph before it is first bound (or run
// inline). The input-projection pass first (it rewrites the forward graph), then batch norm folding,
// convolution + activation fusion, the kernel choice and blocked layouts (the order `corun infer` ran them in),
// then elementwise fusion, then grouping: the order `corun train` has always run them in. With
// CORUN_PARALLEL_OPS=auto each group is made only where the per-width models predict a gain (pass_gain.hpp).
#include <corun/engine.hpp>
#include <corun/input_projection.hpp>

#include "base/check.hpp"
#include "codelets/op.hpp"
#include "codelets/starpu/codelets.hpp"
#include "engine/conv_kernel.hpp"
#include "engine/engine_impl.hpp"
#include "engine/pass_gain.hpp"
#include "sched/layout.hpp"
#include "graphs/graph_impl.hpp"
#include "graphs/passes/forward_rewrite.hpp"
#include "graphs/passes/fuse_elementwise.hpp"
#include "graphs/passes/group_parallel_ops.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace corun {
namespace engine {

namespace {

// CORUN_VERBOSE=passes: one line per pass that ran, saying what it did.
void say(const Config& config, const char* pass, const std::string& what) {
  if (config.verbose_passes) std::fprintf(stderr, "corun: pass %s: %s\n", pass, what.c_str());
}

// The passes for inference graphs only, in their order: each rewrites what a training graph's gradients need.
struct InferencePass {
  bool Config::*asked;
  uint8_t bit;  // GraphImpl::plan_passes
  const char* name;
  const char* why_not_training;
  int (Graph::*run)();
  int GraphPassReport::*count;
  const char* what;
};
constexpr InferencePass kInferencePasses[] = {
    {&Config::fold_batch_norm, detail::GraphImpl::kFoldBatchNorm, "fold_batch_norm", "folding rewrites the weights",
     &Graph::fold_batch_norm, &GraphPassReport::folded_batch_norms, " batch norm(s) folded into their convolution"},
    {&Config::fuse_conv_activation, detail::GraphImpl::kFuseConvActivation, "fuse_conv_activation",
     "its gradients read the activation's input", &Graph::fuse_conv_activation, &GraphPassReport::fused_activations,
     " activation(s) fused into their convolution"},
};

// The passes that change how a node computes or where its bytes sit, before the task-count passes: on an
// inference graph, batch norm folding then convolution + activation fusion (which needs the convolution
// right before the activation); then blocked layouts (after both, and after a training graph's backward).
// Each runs at most once per graph (GraphImpl::plan_passes).
void run_layout_passes(Graph& graph, const Config& config, GraphPassReport& report) {
  detail::GraphImpl& g = graph.impl();
  auto due = [&](bool asked, uint8_t bit) { return asked && (g.plan_passes & bit) == 0; };
  using P = detail::GraphImpl;
  for (const InferencePass& pass : kInferencePasses) {
    if (!due(config.*pass.asked, pass.bit)) continue;
    if (g.has_backward) {
      say(config, pass.name, std::string("skipped: a training graph (") + pass.why_not_training + ")");
    } else {
      report.*pass.count = (graph.*pass.run)();
      say(config, pass.name, std::to_string(report.*pass.count) + pass.what);
    }
    g.plan_passes |= pass.bit;
  }
  // The kernels, once the calls are final and before blocked layouts, which keep blocked only the tensors of
  // convolutions whose kernel takes them so.
  const int chosen = choose_kernels(graph, {config.conv_kernel, config.gemm_kernel}, config.verbose_kernels);
  if (chosen > 0) say(config, "choose_kernels", std::to_string(chosen) + " node(s) given an implementation");
  if (due(config.block_layouts, P::kBlockLayouts)) {
    report.blocked_tensors = graph.block_layouts();
    say(config, "block_layouts", std::to_string(report.blocked_tensors) + " tensor(s) kept in oneDNN's blocked layout");
    g.plan_passes |= P::kBlockLayouts;
  }
}

// The input-projection pass (CORUN_INPUT_PROJECTION; include/corun/input_projection.hpp), first of all: it
// rewrites the forward graph (a training graph's backward is expanded again after it), so the other passes and
// the kernel choice see the final nodes. Once per graph. Asked for but impossible: said, never silently skipped.
void run_input_projection(Graph& graph, const Config& config, GraphPassReport& report) {
  detail::GraphImpl& g = graph.impl();
  const bool asked = config.input_projection.value_or(false) || config.input_projection_auto;
  if (!asked || (g.plan_passes & detail::GraphImpl::kInputProjection) != 0) return;
  CORUN_CHECK(g.bound_engines == 0, Status::invalid_argument,
              "apply_graph_passes: the graph is bound to an Engine; run the passes before the first Engine::run (or "
              "after Engine::release)");
  g.plan_passes |= detail::GraphImpl::kInputProjection;
  if (const std::string why = passes::why_not_rewrite_forward(graph); !why.empty()) {
    if (config.verbose_passes || !config.quiet)
      std::fprintf(stderr, "corun: pass input_projection: skipped: %s\n", why.c_str());
    return;
  }
  const bool training = g.has_backward;
  InputProjectionModel model;
  model.gemms_per_product = training ? 3.0 : 1.0;  // forward, dX and dW per product when trained
  const std::vector<InputProjectionDecision> decisions = plan_input_projections(graph, config, model);
  for (const InputProjectionDecision& d : decisions) report.stacked_input_projections += d.applied ? 1 : 0;
  say(config, "input_projection",
      std::to_string(report.stacked_input_projections) + " of " + std::to_string(decisions.size()) +
          " RNN layer(s) given one stacked input product" +
          (training && report.stacked_input_projections > 0 ? ", the backward expanded again" : ""));
}

// The grouping pass's acceptance: every group, or (by_models) only where the per-width models predict a gain.
passes::AcceptGroup group_acceptance(const Config& config, const PassModels* models, GraphPassReport& report,
                                     std::map<std::vector<uint32_t>, bool>& decided) {
  if (!report.grouping.by_models) return {};
  return [&config, models, &report, &decided](const std::vector<const codelets::OpCall*>& members) {
    std::vector<uint32_t> key;
    for (const codelets::OpCall* c : members) key.push_back(codelets::footprint(*c));
    if (auto it = decided.find(key); it != decided.end()) return it->second;
    GroupDecision d;
    if (models == nullptr || models->times == nullptr) {
      d.apply = report.grouping.when_unknown;
      d.reason =
          std::string("no per-width models here (no Engine): the default, ") + (d.apply ? "grouped" : "not grouped");
    } else {
      std::vector<std::vector<double>> times;
      for (const codelets::OpCall* c : members)
        times.push_back(
            models->times->predict(*c, std::min(models->shape.cores, codelets::op_info(c->kind).max_width)));
      d = decide_group(times, models->shape, models->task_overhead_us, report.grouping.when_unknown);
    }
    if (!d.apply) ++report.declined;
    if (config.verbose_passes)
      std::fprintf(stderr, "corun: parallel-op pass: %zu x %s: %s\n", members.size(),
                   codelets::op_info(members.front()->kind).name, d.reason.c_str());
    decided.emplace(std::move(key), d.apply);
    return d.apply;
  };
}

void run_grouping(detail::GraphImpl& g, const Config& config, const PassModels* models, GraphPassReport& report) {
  const passes::ParallelOpOptions options{.enabled = true, .min_size = report.grouping.min_size};
  // The pass repeats its rounds until nothing changes, so it may ask about the same members again: one
  // decision per set of member footprints.
  std::map<std::vector<uint32_t>, bool> decided;
  const std::vector<passes::OpGroup> groups =
      passes::group_parallel_ops(g, options, group_acceptance(config, models, report, decided));
  if (!groups.empty()) g.grouped = true;
  for (const passes::OpGroup& grp : groups)
    report.groups.push_back({codelets::op_info(grp.kind).name, passes::pattern_name(grp.pattern),
                             static_cast<int>(grp.members.size()), grp.members.front()});
  say(config, "group_parallel_ops",
      std::string(report.grouping.mode()) + ": " + std::to_string(report.groups.size()) + " group(s) made, " +
          std::to_string(report.declined) + " declined");
}

}  // namespace

GraphPassReport apply_graph_passes(Graph& graph, const Config& config, const PassModels* models) {
  detail::GraphImpl& g = graph.impl();
  GraphPassReport report;
  report.grouping = config.grouping();
  report.nodes_before = graph.num_nodes();
  run_input_projection(graph, config, report);
  run_layout_passes(graph, config, report);
  // Each pass runs once per graph: the graph's own marks say which already did (also when the user called
  // Graph::fuse_elementwise or Graph::group_parallel_ops). A grouping pass that found nothing leaves no mark,
  // so backward() still works; run again on the same nodes it finds nothing again.
  const bool fuse = config.fuse_elementwise && !g.fused;
  const bool group = report.grouping.enabled && !g.grouped;
  if (fuse || group)
    CORUN_CHECK(g.bound_engines == 0, Status::invalid_argument,
                "apply_graph_passes: the graph is bound to an Engine; run the passes before the first Engine::run (or "
                "after Engine::release)");
  if (fuse) {
    report.fused_nodes = passes::fuse_elementwise(g);
    g.fused = true;
    say(config, "fuse_elementwise", std::to_string(report.fused_nodes) + " node(s) merged into elementwise chains");
  }
  if (group) run_grouping(g, config, models, report);
  report.nodes_after = graph.num_nodes();
  return report;
}

}  // namespace engine

GraphPassReport apply_graph_passes(Graph& graph, const Config& config) {
  return engine::apply_graph_passes(graph, config, nullptr);
}

// The team widths a task gets under the running policy (its traits, sched/registry.hpp): any width, the
// width of its executor layout, or one worker.
engine::PassModels Engine::Impl::pass_models() {
  if (!pass_times) pass_times = std::make_unique<engine::StarpuOpTimes>();
  engine::PassModels m;
  m.times = pass_times.get();
  const int cores = std::max(1, info.workers);
  m.shape.cores = cores;
  if (policy.traits.teams == sched::TeamWidths::any) {
    m.shape.widths.clear();
    for (int w = 1; w <= cores; ++w) m.shape.widths.push_back(w);
  } else if (policy.traits.teams == sched::TeamWidths::layout) {
    m.shape.widths = {std::clamp(sched::effective_layout().width, 1, cores)};
  }
  return m;
}

GraphPassReport Engine::Impl::plan_graph(Graph& graph) {
  const engine::PassModels models = pass_models();
  GraphPassReport r = engine::apply_graph_passes(graph, config, &models);
  planned[&graph.impl()] = graph.impl().nodes.size();
  return r;
}

GraphPassReport Engine::apply_graph_passes(Graph& graph) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->plan_graph(graph);
}

}  // namespace corun
