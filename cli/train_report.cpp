// corun train's report (cli/train_report.hpp): the results table and its notes, the lower bound, the trace,
// the saved files and --json, all rank 0's.
#include "cli/train_report.hpp"

#include "cli/lstm_session.hpp"
#include "cli/output_paths.hpp"
#include "cli/stop_signals.hpp"
#include "cli/train_files.hpp"
#include "trace/trace.hpp"

#include <corun/machine.hpp>

#include "base/files.hpp"
#include "base/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace corun::cli {

namespace {

// The schedule's physical limit, from the same models the policy used (design.md section 5). Printed only
// when it means something: every op has a calibrated model, and the measured makespan is not below the
// bound beyond noise (it cannot be, unless the models were recorded under another load). Otherwise one line
// says why, naming where the models come from. The measured side is the makespan of docs/traces.md (first
// task start to last task end, the trace's and the Gantt chart's number) when the iteration was traced;
// otherwise the run's wall time, submission to completion, which also counts submitting and waking up, and
// says so: the two differ by the submission overhead, and a reader comparing them must know which is which.
constexpr double kBoundTolerance = 0.95;  // a makespan 5 % under the bound is still timing noise

void print_bound(const RunStats& s, const EngineInfo& info, double traced_makespan_ms) {
  if (!info.own_policy && std::isnan(s.lower_bound_ms) && s.uncalibrated == 0) return;  // not computed
  const std::string models = "StarPU history models for machine " + info.machine_key + " under $STARPU_HOME";
  if (std::isnan(s.lower_bound_ms)) {
    std::printf("lower bound: not computed, %d of %d tasks have no calibrated model yet (%s); run more iterations "
                "or `corun profile`\n",
                s.uncalibrated, s.tasks, models.c_str());
    return;
  }
  const bool traced = !std::isnan(traced_makespan_ms);
  const double measured = traced ? traced_makespan_ms : s.wall_ms;
  const char* what = traced ? "makespan" : "wall time";
  const double ratio = measured / s.lower_bound_ms;
  if (ratio < kBoundTolerance) {
    std::printf("lower bound: not shown, the models predict %.2f ms, more than the measured %s %.2f ms "
                "(ratio %.2f): they were recorded under another load (%s); recalibrate on a quiet machine with "
                "STARPU_CALIBRATE=2\n",
                s.lower_bound_ms, what, measured, ratio, models.c_str());
    return;
  }
  std::printf("last iteration: %s %.2f ms (%s), lower bound %.2f ms = max(critical path %.2f, work %.2f / %d cores), "
              "ratio %.2f\n",
              what, measured,
              traced ? "first task start to last task end, as in the trace"
                     : "submission to completion; the trace's makespan, first task start to last task end, excludes "
                       "submission",
              s.lower_bound_ms, s.critical_path_ms, s.total_work_ms, s.bound_cores, ratio);
}

// The numbers of the results table, computed once for the table and --json.
struct Summary {
  double med = NAN, best = NAN, first_loss = NAN, final_loss = NAN, remote_med = NAN;
  int tasks_before_pass = 0;
  bool numa_accounted = false;  // remote bytes are reported (replicas, or one solver over several domains)
};

Summary summarize(const TrainRecord& r, const PassTotals& passes, const EngineInfo& info, int replicas) {
  Summary s;
  // The first iteration of a process also registers data and loads perfmodels: keep it out of the summary.
  const std::vector<double> timed(r.ms.size() > 1 ? r.ms.begin() + 1 : r.ms.begin(), r.ms.end());
  s.med = timed.empty() ? NAN : median(timed);
  s.best = timed.empty() ? NAN : *std::min_element(timed.begin(), timed.end());
  s.first_loss = r.state.losses.empty() ? NAN : r.state.losses.front();
  s.final_loss = r.state.losses.empty() ? NAN : r.state.losses.back();
  // The run's tasks as they would be without the passes (replicas: every replica's graph plus the reduction
  // and copy tasks, which the passes do not change).
  s.tasks_before_pass = r.tasks + (passes.nodes_before - passes.nodes_after);
  // Remote bytes are accounted with replicas or with one solver over several NUMA domains (docs/numa.md).
  s.numa_accounted = replicas > 1 || info.numa_domains > 1;
  s.remote_med = r.remote.empty() ? NAN : median(r.remote);
  return s;
}

void print_results(const TrainOptions& o, const TrainRecord& r, const PassTotals& passes, const Summary& s,
                   TrainSession& session, Engine& engine, const job::World& world, double accuracy) {
  const EngineInfo& info = engine.info();
  const int replicas = session.replicas();
  std::printf("\n%s\n\n", session.title().c_str());
  std::printf("| iterations | median ms/iter | min ms/iter | tasks/iter | policy | workers | first loss | final loss |\n");
  std::printf("|---:|---:|---:|---:|---|---:|---:|---:|\n");
  std::printf("| %ld | %.2f | %.2f | %d | %s | %d | %.4f | %.4f |\n", r.state.iteration, s.med, s.best, r.tasks,
              info.policy.c_str(), info.workers, s.first_loss, s.final_loss);
  std::printf("tasks/iter before the passes: %d (CORUN_PARALLEL_OPS=%s, %zu group(s))\n", s.tasks_before_pass,
              passes.pass.mode(), passes.root.groups.size());
  if (r.ms.size() > 1) std::printf("(timing excludes the first iteration of this run)\n");
  if (r.resumed_from > 0)
    std::printf("(resumed at iteration %ld: this run did %zu iterations)\n", r.resumed_from, r.ms.size());
  const bool traced = !o.trace_path.empty() && !engine.trace().empty();
  if (!r.ms.empty()) print_bound(r.last, info, traced ? engine.trace_meta().makespan_us / 1000.0 : NAN);
  if (s.numa_accounted)
    std::printf("replicas: %d, remote bytes per iteration %.0f (median; NUMA %s over %d domain%s; from the placement: "
                "what tasks read from tensors homed on another domain)\n",
                replicas, s.remote_med, info.numa_mode.c_str(), info.numa_domains, info.numa_domains == 1 ? "" : "s");
  if (world.distributed())
    std::printf("ranks: %d x %d replica(s); rank 0 sent %.0f bytes of gradient sums in the last iteration (StarPU-MPI, "
                "binary rank tree)\n",
                world.size, replicas, r.last.cross_rank_bytes);
  if (accuracy >= 0.0) std::printf("test accuracy: %.2f%%\n", 100.0 * accuracy);
}

json::Value engine_json(const EngineInfo& info) {
  return {{"policy", info.policy},
          {"policy_source", info.policy_source},
          {"workers", info.workers},
          {"workers_source", info.workers_source},
          {"starpu_version", info.starpu_version},
          {"starpu_maxcpus", info.starpu_maxcpus},
          {"starpu_maxnumanodes", info.starpu_maxnumanodes},
          {"blas", info.blas},
          {"blas_core", info.blas_core},
          {"blas_threads", info.blas_threads},
          {"kernels", info.kernels},
          {"executors", info.layout},
          {"machine_key", info.machine_key},
          {"replicas", info.replicas},
          {"numa_mode", info.numa_mode},
          {"numa_domains", info.numa_domains}};
}

void write_json(const TrainOptions& o, const TrainRecord& r, const PassTotals& passes, const Summary& s,
                TrainSession& session, const EngineInfo& info, const job::World& world, bool checkpointing,
                double accuracy) {
  json::Value config = session.json_config();
  config["iters"] = o.iters;
  config["fuse_elementwise"] = o.fuse;
  config["parallel_ops"] = passes.pass.enabled;
  config["parallel_ops_mode"] = passes.pass.mode();
  config["parallel_ops_min"] = passes.pass.min_size;
  if (session.layout_blocking()) config["blocked_tensors"] = passes.root.blocked_tensors;
  config["ranks"] = world.size;
  json::Value summary = {{"median_ms", s.med},
                         {"min_ms", s.best},
                         {"tasks_per_iter", r.tasks},
                         {"tasks_per_iter_before_passes", s.tasks_before_pass},
                         {"first_loss", s.first_loss},
                         {"final_loss", s.final_loss},
                         {"last_ms", r.last.wall_ms},
                         {"lower_bound_ms", r.last.lower_bound_ms},
                         {"critical_path_ms", r.last.critical_path_ms},
                         {"total_work_ms", r.last.total_work_ms},
                         {"uncalibrated_nodes", r.last.uncalibrated},
                         {"tuning_runs", r.tuning_runs}};
  if (s.numa_accounted) summary["remote_bytes_per_iter"] = s.remote_med;
  if (world.distributed()) summary["cross_rank_bytes_last_iter"] = r.last.cross_rank_bytes;
  if (accuracy >= 0.0) summary["test_accuracy"] = accuracy;
  json::Value result = {{"config", std::move(config)},
                        {"machine",
                         {{"nproc", machine::nproc()},
                          {"cpu_model", machine::cpu_model()},
                          {"topology", machine::topology_summary()},
                          {"affinity", machine::affinity_list()},
                          {"git_sha", machine::git_sha()}}},
                        {"engine", engine_json(info)},
                        {"ms_per_iter", r.state.ms},
                        {"loss", r.state.losses}};
  if (s.numa_accounted) result["remote_bytes_per_iter"] = r.remote;
  result["progress"] = {{"iterations_done", r.state.iteration},
                        {"resumed_from", r.resumed_from},
                        {"iterations_this_run", r.ms.size()},
                        {"stopped_by", r.stopped ? stop::name(r.stop_signal) : ""},
                        {"checkpoint", checkpointing ? o.ckpt_dir : std::string()}};
  result["summary"] = std::move(summary);
  write_file_atomically(o.json_path, json::dump(result) + "\n", "the --json results");
}

}  // namespace

void report_training(const TrainOptions& o, const TrainRecord& r, const PassTotals& passes, TrainSession& session,
                     Engine& engine, const job::World& world, bool checkpointing, double accuracy) {
  const EngineInfo& info = engine.info();
  const int replicas = session.replicas();
  const Summary s = summarize(r, passes, info, replicas);
  print_results(o, r, passes, s, session, engine, world, accuracy);
  if (!o.trace_path.empty()) {
    write_chrome_trace(o.trace_path, engine.trace_meta(), engine.trace());
    std::printf("trace of the last iteration: %s (draw it with: corun plot-trace %s -o %s.png)\n",
                o.trace_path.c_str(), o.trace_path.c_str(), o.trace_path.c_str());
  }
  write_training_files(engine, session.graph(), {o.save_dir, o.grads_dir, o.dump_dir, replicas * world.size});
  if (!o.save_onnx.empty()) {
    check_output_file("--save-onnx", o.save_onnx);  // again: the target may have turned read-only during the run
    session.save_onnx(engine, o.save_onnx);
    std::printf("trained model: %s\n", o.save_onnx.c_str());
  }
  if (!o.json_path.empty()) write_json(o, r, passes, s, session, info, world, checkpointing, accuracy);
}

}  // namespace corun::cli
