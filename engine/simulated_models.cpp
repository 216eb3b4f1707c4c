#include "engine/simulated_models.hpp"

#include "codelets/starpu/codelets.hpp"

#include <starpu.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <utility>

namespace corun::engine {

namespace {

std::string describe_shapes(const codelets::OpCall& call) {
  std::string s;
  for (const Shape& shape : call.shapes) s += (s.empty() ? "" : " ") + shape.str();
  return s.empty() ? "no buffers" : s;
}

std::string hex_footprint(uint32_t footprint) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", footprint);
  return buf;
}

// What one node asks of the models: (call, widths) pairs; a group's members at width 1 (group_cost).
std::vector<std::pair<const codelets::OpCall*, std::vector<int>>> checks_of(const codelets::OpCall& call,
                                                                           sched::TeamWidths teams, int cores) {
  std::vector<std::pair<const codelets::OpCall*, std::vector<int>>> checks;
  if (!call.members.empty()) {
    for (const codelets::OpCall& m : call.members) checks.emplace_back(&m, std::vector<int>{1});
    return checks;
  }
  checks.emplace_back(&call, widths_to_model(teams, codelets::op_info(call.kind).max_width, cores));
  return checks;
}

}  // namespace

std::vector<int> widths_to_model(sched::TeamWidths teams, int max_width, int cores) {
  const int widest = teams == sched::TeamWidths::one ? 1 : std::max(1, std::min(max_width, cores));
  std::vector<int> widths;
  for (int w = 1; w <= widest; ++w) widths.push_back(w);
  return widths;
}

std::vector<UnmodelledOp> unmodelled_ops(const std::vector<detail::Node>& nodes, sched::TeamWidths teams, int cores,
                                         const PredictUs& predict) {
  std::vector<UnmodelledOp> found;
  std::map<std::pair<int, uint32_t>, int> seen;  // (kind, footprint) -> index in found, or -1: modelled
  for (const detail::Node& node : nodes) {
    for (const auto& [call, widths] : checks_of(node.call, teams, cores)) {
      const auto key = std::make_pair(static_cast<int>(call->kind), codelets::footprint(*call));
      auto [it, fresh] = seen.try_emplace(key, -1);
      if (!fresh) {
        if (it->second >= 0) ++found[static_cast<size_t>(it->second)].nodes;
        continue;
      }
      UnmodelledOp op;
      for (int w : widths) {
        const double us = predict(*call, w);
        if (!(us > 0)) op.widths.push_back(w);  // 0 under SimGrid, NaN natively: no entry
      }
      if (op.widths.empty()) continue;
      op.op = codelets::op_info(call->kind).name;
      op.footprint = key.second;
      op.shapes = describe_shapes(*call);
      op.node = node.name;
      op.nodes = 1;
      it->second = static_cast<int>(found.size());
      found.push_back(std::move(op));
    }
  }
  return found;
}

std::string describe_widths(const std::vector<int>& widths) {
  std::string s;
  for (size_t i = 0; i < widths.size();) {
    size_t j = i;
    while (j + 1 < widths.size() && widths[j + 1] == widths[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + std::to_string(widths[i]);
    if (j > i) s += "-" + std::to_string(widths[j]);
    i = j + 1;
  }
  return s;
}

std::string unmodelled_ops_message(const std::vector<UnmodelledOp>& ops, const std::string& policy,
                                   const std::string& model_dir, const std::string& machine_key) {
  std::ostringstream m;
  m << "corun: simulated run refused: " << ops.size() << " op footprint(s) of the graph have no calibrated model at "
    << "the widths the " << policy << " policy may give them (StarPU's SimGrid mode would abort on the first):\n";
  for (size_t i = 0; i < ops.size() && i < kListed; ++i) {
    const UnmodelledOp& op = ops[i];
    m << "  " << op.op << " (model corun_" << op.op << ") footprint " << hex_footprint(op.footprint) << ", shapes "
      << op.shapes << ": no model at width " << describe_widths(op.widths) << " (node '" << op.node << "'";
    if (op.nodes > 1) m << " and " << op.nodes - 1 << " more";
    m << ")\n";
  }
  if (ops.size() > kListed) m << "  ... and " << ops.size() - kListed << " more\n";
  m << "models looked up in " << (model_dir.empty() ? std::string("StarPU's default directory") : model_dir)
    << " for machine key " << (machine_key.empty() ? std::string("(unset)") : machine_key) << ".\n"
    << "Calibrate the same command (same model and sizes) natively first: every op at width 1, then at width 2 on a "
       "quiet machine, with STARPU_CALIBRATE=1 and at least 12 iterations (StarPU drops each entry's first sample "
       "and uses it from 10); `corun simulate` prints the commands (docs/simulation.md). An op that runs once per "
       "run never calibrates: leave it out (cifar-quick: --eval-images 0)";
  return m.str();
}

void refuse_unmodelled_ops(const std::vector<detail::Node>& nodes, const std::string& policy,
                           sched::TeamWidths teams, int cores) {
  // A probe task (never submitted) carries the call: its codelet's model and footprint are the node's.
  const PredictUs predict = [](const codelets::OpCall& call, int width) {
    starpu_task probe;
    starpu_task_init(&probe);
    probe.cl = codelets::codelet(call.kind);
    probe.cl_arg = const_cast<codelets::OpCall*>(&call);
    probe.cl_arg_size = 0;
    starpu_perfmodel_device dev{};
    dev.type = STARPU_CPU_WORKER;
    dev.ncores = width;
    starpu_perfmodel_arch arch{};
    arch.ndevices = 1;
    arch.devices = &dev;
    const double us = starpu_task_expected_length(&probe, &arch, 0);
    probe.cl_arg = nullptr;
    starpu_task_clean(&probe);
    return us;
  };
  const std::vector<UnmodelledOp> missing = unmodelled_ops(nodes, teams, cores, predict);
  if (missing.empty()) return;
  const char* dir = std::getenv("STARPU_PERF_MODEL_DIR");
  const char* key = std::getenv("STARPU_HOSTNAME");
  throw UnmodelledOpsError(unmodelled_ops_message(missing, policy, dir != nullptr ? dir : "", key != nullptr ? key : ""));
}

}  // namespace corun::engine
