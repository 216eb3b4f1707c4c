// corun profile: Graphi's profiler (section 4.2) for one model on this machine: any model `corun train` knows
// (make_session, the same flags), one solver's training step.
//   (b) calibrates every op at every team width the candidate layouts can use and every width the corun
//       policy's width search may measure (StarPU history models, saved under the machine key at shutdown,
//       so later runs on identical machines reuse them: the corun policy then runs no tuning run);
//   (a) runs the graph under every candidate executor layout n x k (every k dividing the core count, plus
//       the graph's own parallel width when it suggests one) and keeps the smallest median makespan;
//   (c) writes a profile file for CORUN_PROFILE;  (d) prints the table of what it tried.
// Each configuration gets its own Engine (StarPU is re-initialised with the layout); configurations are
// measured round-robin so that slow phases of a shared machine hit all of them alike.
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/lstm_session.hpp"
#include "cli/output_paths.hpp"
#include "cli/train_session.hpp"

#include <corun/engine.hpp>
#include <corun/machine.hpp>

#include "base/check.hpp"
#include "engine/preflight.hpp"
#include "graphs/passes/levels.hpp"
#include "sched/planner/cpf_planner.hpp"
#include "sched/planner/width_search.hpp"
#include "sched/profiler/profile_file.hpp"
#include "sched/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kOwnFlags = {
    {"--iters", true, "timed iterations per configuration and round (default 5)"},
    {"--rounds", true, "rounds over all configurations (default 3); the median of all iterations counts"},
    {"--calibration-iters", true, "iterations per team width while calibrating (default 16; StarPU needs 10 samples)"},
    {"--policy", true, "corun policy to profile (default cpf)"},
    {"-o", true, "profile file to write (default corun-profile-<model>-<size>.txt)"},
    {"--help", false, "show this help"},
};

std::vector<FlagSpec> flags() {
  std::vector<FlagSpec> f = model_flags();  // every model `corun train` knows, with its shape flags
  f.insert(f.end(), kOwnFlags.begin(), kOwnFlags.end());
  return f;
}

std::string usage() {
  return "usage: corun profile --model lstm|phased-lstm|cifar-quick|pathnet|googlenet|wide-deep [--size S] [-o FILE] "
         "[options]\n" +
         describe(flags());
}

struct Options {
  Config engine;  // the environment's settings, which every configuration tried starts from
  std::string model, size = "small", policy = "cpf", output;
  // 16 calibration steps: StarPU predicts from 10 samples and drops an entry's first, the engine's first run
  // of a graph records none (cold kernels), and 12 steps left ops that run once per step with 8-9 samples at
  // width 2 on the 2-core VM: uncalibrated, so the corun policy searched their width again.
  long iters = 5, rounds = 3, calibration_iters = 16;
};

// The largest number of nodes at one depth (hops from a source): how many ops the graph can offer at once.
int parallel_width(const Graph& graph) {
  const auto deps = graphs::dependencies(graph.impl());
  std::vector<int> depth(deps.successors.size(), 0);
  std::map<int, int> at;
  for (size_t i = 0; i < depth.size(); ++i) {
    for (int32_t p : deps.predecessors[i]) depth[i] = std::max(depth[i], depth[static_cast<size_t>(p)] + 1);
    ++at[depth[i]];
  }
  int best = 1;
  for (const auto& [d, n] : at) best = std::max(best, n);
  return best;
}

// n x k for every k dividing the cores, plus the graph's own width as the executor count when it is
// smaller than the core count and not already a candidate.
std::vector<sched::ExecutorLayout> candidate_layouts(int cores, int graph_width) {
  std::vector<sched::ExecutorLayout> r;
  for (int k = 1; k <= cores; ++k)
    if (cores % k == 0) r.push_back({cores / k, k});
  if (graph_width > 1 && graph_width < cores) {
    const sched::ExecutorLayout g{graph_width, cores / graph_width};
    if (std::find(r.begin(), r.end(), g) == r.end()) r.push_back(g);
  }
  return r;
}

Config config_for(const Options& o, const sched::ExecutorLayout& layout, int fixed_width) {
  Config c = o.engine;
  c.policy = o.policy;
  c.profile.clear();  // the profiler measures layouts; it never reads an old profile
  c.executors = layout.count > 0 ? layout.str() : "";  // count 0: one executor per core, the default
  c.fixed_width = fixed_width;
  c.quiet = true;
  return c;
}

// Runs `iters` steps (after one untimed warm-up step) under `config`; returns their times in ms.
std::vector<double> measure(TrainSession& s, const Config& config, long iters, uint64_t& batch) {
  Engine engine(config);
  std::vector<double> ms;
  s.step(engine, batch++);
  for (long i = 0; i < iters; ++i) ms.push_back(s.step(engine, batch++).wall_ms);
  engine.release(s.graph());
  return ms;
}

class ScopedCalibrate {  // STARPU_CALIBRATE=1: record samples even for models that already predict
 public:
  ScopedCalibrate() {
    if (const char* v = std::getenv("STARPU_CALIBRATE")) old_ = v;
    setenv("STARPU_CALIBRATE", "1", 1);
  }
  ~ScopedCalibrate() { old_ ? (void)setenv("STARPU_CALIBRATE", old_->c_str(), 1) : (void)unsetenv("STARPU_CALIBRATE"); }

 private:
  std::optional<std::string> old_;
};

// Parses every flag into `o` and builds the session (throws UsageError); false for --help (usage printed).
bool parse_options(int argc, char** argv, Options& o, std::unique_ptr<TrainSession>& session) {
  Args args(argc, argv, 2, flags());
  if (args.has("--help")) {
    std::cout << usage();
    return false;
  }
  o.iters = args.positive("--iters", o.iters);
  o.rounds = args.positive("--rounds", o.rounds);
  o.calibration_iters = args.positive("--calibration-iters", o.calibration_iters);
  o.policy = args.str("--policy", o.policy);
  bool ours = false;
  for (const auto& p : sched::own_policies()) ours = ours || o.policy == p.name;
  if (!ours)
    throw UsageError("--policy must be one of corun's policies (" +
                     sched::own_policy_names([](const sched::PolicyEntry&) { return true; }) + "), got '" +
                     o.policy + "'");
  // Last, once the cheap flags are checked (cifar-quick reads its dataset): training steps of one solver,
  // so the layouts tried are those of one graph on every core (replicas would split the cores).
  session = make_session(args, 1);
  o.model = args.str("--model", "");
  o.size = args.str("--size", "small");  // make_session checked it
  if (o.model == "cifar-quick" || o.model == "wide-deep") o.size = "fixed";  // one size each
  o.output = args.str("-o", "corun-profile-" + o.model + "-" + o.size + ".txt");
  return true;
}

// (b) Calibrates width 1 on the first engine (one executor per core), which also tells how many workers
// StarPU gives us (returned).
int calibrate_width_one(TrainSession& session, const Options& o, uint64_t& batch) {
  ScopedCalibrate calibrate;
  Engine engine(config_for(o, {0, 1}, 1));
  const int cores = engine.info().workers;
  std::fprintf(stderr, "corun profile: calibrating width 1 (%ld iterations, layout %s)\n", o.calibration_iters,
               engine.info().layout.c_str());
  for (long i = 0; i < o.calibration_iters; ++i) session.step(engine, batch++);
  engine.release(session.graph());
  return cores;
}

// (b) Every other team width any candidate can use, and every width the corun policy's climb may measure
// (at the step CORUN_WIDTH_INTERVAL gives it), all executors busy at that width: with all of them
// calibrated, the corun policy takes its climbs from the models instead of running its tuning runs.
void calibrate_team_widths(TrainSession& session, const Options& o, const std::vector<sched::ExecutorLayout>& layouts,
                           int cores, uint64_t& batch) {
  // Oversubscribed (STARPU_NCPU above the allocation's cores: a correctness run) a team's times are time slices
  // that no policy can use, and teams of odd widths crawl (8 workers on 2 cores: width 6 ran for minutes): only
  // the layouts' own widths then.
  const int allocated = machine::allocation(o.engine.cgroup_root).workers;
  std::vector<int> widths;
  if (cores <= allocated)
    widths = sched::climb_widths(cores, engine::tuner_settings(o.engine, cores, false).width_interval);
  else
    std::fprintf(stderr, "corun profile: %d workers on %d cores: calibrating the layouts' widths only, not every "
                 "width of the corun policy's climb\n", cores, allocated);
  for (const auto& l : layouts)
    for (int w : sched::team_widths_of(l.width)) widths.push_back(w);
  std::sort(widths.begin(), widths.end());
  widths.erase(std::unique(widths.begin(), widths.end()), widths.end());
  widths.erase(std::remove(widths.begin(), widths.end(), 1), widths.end());  // calibrate_width_one's
  for (int w : widths) {
    ScopedCalibrate calibrate;
    const sched::ExecutorLayout l{cores / w, w};
    std::fprintf(stderr, "corun profile: calibrating width %d (%ld iterations, layout %s)\n", w, o.calibration_iters,
                 l.str().c_str());
    Engine engine(config_for(o, l, w));
    for (long i = 0; i < o.calibration_iters; ++i) session.step(engine, batch++);
    engine.release(session.graph());
  }
}

// (a) The configuration search, round-robin: every layout's times over all rounds.
std::vector<std::vector<double>> search_layouts(TrainSession& session, const Options& o,
                                                const std::vector<sched::ExecutorLayout>& layouts, uint64_t& batch) {
  std::vector<std::vector<double>> samples(layouts.size());
  for (long r = 0; r < o.rounds; ++r)
    for (size_t c = 0; c < layouts.size(); ++c) {
      std::fprintf(stderr, "corun profile: round %ld/%ld, layout %s\n", r + 1, o.rounds, layouts[c].str().c_str());
      const auto ms = measure(session, config_for(o, layouts[c], 0), o.iters, batch);
      samples[c].insert(samples[c].end(), ms.begin(), ms.end());
    }
  return samples;
}

// (c) The profile: what every layout measured, the smallest median chosen.
sched::Profile make_profile(const Options& o, int cores, const std::vector<sched::ExecutorLayout>& layouts,
                            const std::vector<std::vector<double>>& samples) {
  sched::Profile prof;
  prof.machine_key = machine::machine_key();
  prof.cpu = machine::cpu_model();
  prof.workers = cores;
  prof.model = o.model;
  prof.size = o.size;
  size_t best = 0;
  for (size_t c = 0; c < layouts.size(); ++c) {
    sched::ProfiledConfig pc;
    pc.layout = layouts[c];
    pc.median_ms = median(samples[c]);
    pc.min_ms = *std::min_element(samples[c].begin(), samples[c].end());
    pc.runs = static_cast<int>(samples[c].size());
    prof.tried.push_back(pc);
    if (pc.median_ms < prof.tried[best].median_ms) best = c;
  }
  prof.layout = layouts[best];
  return prof;
}

// (d) The table of what was tried.
void print_table(const Options& o, const sched::Profile& prof, int graph_width) {
  double best_ms = 0.0;
  for (const auto& pc : prof.tried)
    if (pc.layout == prof.layout) best_ms = pc.median_ms;
  std::printf("\ncorun profile: %s %s, policy %s, %d workers, graph width %d, machine %s (%s)\n\n", o.model.c_str(), o.size.c_str(),
              o.policy.c_str(), prof.workers, graph_width, prof.machine_key.c_str(), prof.cpu.c_str());
  std::printf("| layout | executors | cores each | team widths | median ms/iter | min ms/iter | iterations | vs best |\n");
  std::printf("|---|---:|---:|---|---:|---:|---:|---:|\n");
  for (const auto& pc : prof.tried) {
    std::string tw;
    for (int w : sched::team_widths_of(pc.layout.width)) tw += (tw.empty() ? "" : ",") + std::to_string(w);
    std::printf("| %s%s | %d | %d | %s | %.2f | %.2f | %d | %.2fx |\n", pc.layout.str().c_str(),
                pc.layout == prof.layout ? " (chosen)" : "", pc.layout.count, pc.layout.width, tw.c_str(), pc.median_ms,
                pc.min_ms, pc.runs, pc.median_ms / best_ms);
  }
  std::printf("\nprofile written to %s; use it with CORUN_SCHED=%s CORUN_PROFILE=%s\n", o.output.c_str(),
              o.policy.c_str(), o.output.c_str());
}

}  // namespace

int profile(int argc, char** argv) {
  Options o;
  std::unique_ptr<TrainSession> session;
  try {
    if (!parse_options(argc, argv, o, session)) return 0;
  } catch (const UsageError& e) {
    return usage_error("profile", e, flags(), usage());
  }
  o.engine = Config::from_env();
  o.engine.block_layouts = session->layout_blocking().value_or(false);  // the graph `corun train` runs
  if (policy_help_requested(o.engine)) return 0;
  check_config(config_for(o, {0, 1}, 1));  // the environment and the output, before minutes of calibration
  check_output_file("-o", o.output);

  uint64_t batch = 0;
  const int cores = calibrate_width_one(*session, o, batch);
  const int graph_width = parallel_width(session->graph());
  const auto layouts = candidate_layouts(cores, graph_width);
  calibrate_team_widths(*session, o, layouts, cores, batch);
  const auto samples = search_layouts(*session, o, layouts, batch);
  const sched::Profile prof = make_profile(o, cores, layouts, samples);
  sched::write_profile(o.output, prof);
  print_table(o, prof, graph_width);
  return 0;
}

}  // namespace corun::cli
