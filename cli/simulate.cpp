// corun simulate --machine FILE [options] -- train|infer ARGS: runs the same command in simulated time on a
// described machine (StarPU's SimGrid mode, docs/simulation.md).
//
// This command runs in the native build. StarPU's SimGrid build loads the machine description before the
// application's main starts, so the files have to exist first: it writes them (the platform of
// machine.cores CPUs, and per-width models of every op from one of two sources), then runs the SimGrid
// build of corun with STARPU_PERF_MODEL_DIR / STARPU_HOSTNAME / STARPU_NCPU pointing at them, and waits for it:
// when the simulated run refuses ops without a model (exit kUnmodelledExitCode), it removes what it wrote
// and prints the native commands that calibrate them.
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/simulate/calibration_command.hpp"
#include "cli/simulate/model_source.hpp"

#include "base/check.hpp"

#include <starpu.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <corun/machine.hpp>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace corun::cli {

namespace {

namespace fs = std::filesystem;

const std::vector<FlagSpec> kFlags = {
    {"--machine", true, "machine description to simulate (machines/*.json)"},
    {"--law", true, "scaling law of model source (b): optimistic | pessimistic (default pessimistic)"},
    {"--models", true, "model source (a): a directory of corun_<op>.<key> files calibrated on the target machine"},
    {"--measured-dir", true,
     "perf model directory of this machine's measurements (default STARPU_PERF_MODEL_DIR "
     "or ~/.starpu/sampling)"},
    {"--measured-key", true, "machine key of those measurements (default this machine's, as `corun info` prints it)"},
    {"--ignore-width2", false, "source (b): ignore measured width-2 times (measured on a loaded machine)"},
    {"--dir", true, "where to write the simulated machine's files (default a new directory under /tmp)"},
    {"--corun", true, "corun built against the SimGrid StarPU (default build/simgrid/cli/corun beside this build)"},
    {"--help", false, "show this help"},
};

std::string usage() {
  return "usage: corun simulate --machine FILE [options] -- train|infer [their options]\n" + describe(kFlags) +
         "model sources: (b) by default, this machine's measured width-1/2 times scaled by --law;\n"
         "  (a) with --models, models calibrated on the target (`corun profile` there, docs/simulation.md)\n";
}

// The SimGrid build's corun: build/<flavour>/cli/corun -> build/simgrid/cli/corun.
std::string default_simgrid_corun() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return (self.parent_path().parent_path().parent_path() / "simgrid" / "cli" / "corun").string();
}

std::string default_measured_dir() {
  if (const char* d = std::getenv("STARPU_PERF_MODEL_DIR")) return d;
  const char* home = std::getenv("XDG_CACHE_HOME");
  if (home == nullptr) home = std::getenv("STARPU_HOME");
  if (home == nullptr) home = std::getenv("HOME");
  CORUN_CHECK(home != nullptr, Status::invalid_config, "HOME is not set: pass --measured-dir");
  return (fs::path(home) / ".starpu" / "sampling").string();
}

std::string make_temp_dir() {
  std::string pattern = (fs::temp_directory_path() / "corun-sim-XXXXXX").string();
  CORUN_CHECK(mkdtemp(pattern.data()) != nullptr, Status::io_error,
              "cannot create a directory under " << fs::temp_directory_path().string() << ": pass --dir");
  return pattern;
}

// What was under `dir` before `prepare` wrote there (nothing when it did not exist).
std::vector<fs::path> entries_under(const std::string& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    found.push_back(it->path());
  return found;
}

// A refused input leaves nothing behind (issue 52): what `prepare` wrote, and the directory itself when this
// run created it (the default temp dir, or a --dir that did not exist). Children go before their parents.
void remove_written(const std::string& dir, bool created, const std::vector<fs::path>& before) {
  std::error_code ec;
  if (created) {
    fs::remove_all(dir, ec);
    return;
  }
  std::vector<fs::path> written = entries_under(dir);
  std::sort(written.begin(), written.end(),
            [](const fs::path& a, const fs::path& b) { return a.native().size() > b.native().size(); });
  for (const fs::path& p : written)
    if (std::find(before.begin(), before.end(), p) == before.end()) fs::remove(p, ec);
}

// This executable, as the calibration command names it.
std::string native_corun() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("corun") : self.string();
}

pid_t g_child = -1;
void forward_signal(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

// Runs the SimGrid build's corun and returns its exit code (128 + N when signal N ended it). Waits instead
// of replacing this process so that a refusal can remove the files written for it. SIGINT and SIGQUIT reach
// the child from the terminal already (one process group), so they are ignored here rather than sent twice
// (train's second SIGINT ends it at once); SIGTERM, SIGHUP and SIGUSR1, which a batch system sends to the
// process it started, are passed on.
int run_child(std::vector<char*>& argv) {
  std::fflush(nullptr);
  struct sigaction ignore {}, forward {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  forward.sa_handler = forward_signal;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  g_child = fork();
  CORUN_CHECK(g_child >= 0, Status::runtime_error, "cannot start '" << argv[0] << "': " << std::strerror(errno));
  if (g_child == 0) {
    sigaction(SIGINT, &old_int, nullptr);
    sigaction(SIGQUIT, &old_quit, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // corun simulate killed: its simulation ends too
    execv(argv[0], argv.data());
    std::fprintf(stderr, "corun: cannot run '%s': %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  for (int sig : {SIGTERM, SIGHUP, SIGUSR1}) sigaction(sig, &forward, nullptr);
  int status = 0;
  while (waitpid(g_child, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// What `prepare` wrote: the directory, whether this run created it, and what was there before.
struct Written {
  std::string dir;
  bool created = false;
  std::vector<fs::path> before;
};

// Runs `command` (train|infer ...) on the SimGrid build in the machine `prepared` wrote. A refusal of ops without
// a model (kUnmodelledExitCode; the simulated run named them) removes the files and prints how to calibrate.
int run_simulated(const sim::SourceRequest& req, const sim::Prepared& prepared, std::string simgrid_corun,
                  const std::vector<char*>& command, const Written& written) {
  sim::CalibrationTarget calibrate;
  calibrate.native_corun = native_corun();
  calibrate.command.assign(command.begin(), command.end());
  calibrate.measured_dir = req.measured_dir;
  if (req.target_models.empty() && req.measured_key != machine::machine_key()) calibrate.measured_key = req.measured_key;
  calibrate.target_models = req.target_models;
  setenv("STARPU_PERF_MODEL_DIR", written.dir.c_str(), 1);
  setenv("STARPU_HOSTNAME", prepared.key.c_str(), 1);
  setenv("STARPU_NCPU", std::to_string(prepared.machine.cores).c_str(), 1);
  std::vector<char*> child{simgrid_corun.data()};
  child.insert(child.end(), command.begin(), command.end());
  child.push_back(nullptr);
  const int code = run_child(child);
  if (code != kUnmodelledExitCode) return code;
  remove_written(written.dir, written.created, written.before);
  std::fprintf(stderr, "corun simulate: removed what it wrote in %s; %s", written.dir.c_str(),
               sim::calibration_advice(calibrate).c_str());
  return 1;
}

}  // namespace

int simulate(int argc, char** argv) {
  int split = argc;
  for (int i = 2; i < argc; ++i)
    if (std::string(argv[i]) == "--") {
      split = i;
      break;
    }
  sim::SourceRequest req;
  std::string simgrid_corun;
  try {
    Args args(split, argv, 2, kFlags);
    if (args.has("--help")) {
      std::cout << usage();
      return 0;
    }
    if (!args.has("--machine")) throw UsageError("--machine FILE is required (see machines/*.json)");
    if (split + 1 >= argc) throw UsageError("the command to simulate is missing: -- train|infer [options]");
    const std::string command = argv[split + 1];
    if (command != "train" && command != "infer")
      throw UsageError("only train and infer can be simulated, not '" + command + "'");
    if (args.has("--models") && args.has("--law"))
      throw UsageError("--law scales measured models (source b); --models uses the target's own (source a): pick one");
    req.machine_file = args.str("--machine", "");
    req.law = args.str("--law", "pessimistic");
    if (req.law != "optimistic" && req.law != "pessimistic")
      throw UsageError("--law must be optimistic or pessimistic, got '" + req.law + "'");
    req.target_models = args.str("--models", "");
    req.measured_dir = args.str("--measured-dir", "");
    req.measured_key = args.str("--measured-key", "");
    req.use_width2 = !args.has("--ignore-width2");
    if (args.has("--models") && args.has("--ignore-width2"))
      throw UsageError("--ignore-width2 applies to scaled models (source b), not to --models (source a)");
    req.out_dir = args.str("--dir", "");
    simgrid_corun = args.str("--corun", "");
  } catch (const UsageError& e) {
    std::fprintf(stderr, "corun simulate: %s\n%s", e.what(), usage().c_str());
    return 2;
  }
#ifdef STARPU_SIMGRID
  detail::fail(Status::invalid_config,
               "simulate runs from a native build of corun (this one is the SimGrid build it starts): run "
               "build/<flavour>/cli/corun simulate");
#endif
  if (simgrid_corun.empty()) simgrid_corun = default_simgrid_corun();
  CORUN_CHECK(!simgrid_corun.empty() && access(simgrid_corun.c_str(), X_OK) == 0, Status::invalid_config,
              "no SimGrid build of corun at '" << simgrid_corun
                                               << "': build one with scripts/setup.sh simgrid, or pass --corun PATH");
  if (req.measured_dir.empty() && req.target_models.empty()) req.measured_dir = default_measured_dir();
  if (req.measured_key.empty() && req.target_models.empty()) req.measured_key = machine::machine_key();
  std::error_code ec;
  const bool created = req.out_dir.empty() || !fs::exists(req.out_dir, ec);
  if (req.out_dir.empty()) req.out_dir = make_temp_dir();
  const std::vector<fs::path> before = entries_under(req.out_dir);

  sim::Prepared prepared;
  try {
    prepared = sim::prepare(req);
  } catch (...) {
    remove_written(req.out_dir, created, before);
    throw;
  }
  std::printf(
      "corun simulate: simulated time (StarPU %d.%d SimGrid mode), machine %s (%s): %d cores, %d NUMA domain(s)\n"
      "corun simulate: models: %s\ncorun simulate: files in %s (STARPU_HOSTNAME=%s)\n",
      STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, prepared.machine.name.c_str(), prepared.machine.path.c_str(),
      prepared.machine.cores, prepared.machine.numa_domains, prepared.source.c_str(), req.out_dir.c_str(),
      prepared.key.c_str());
  std::fflush(stdout);

  return run_simulated(req, prepared, simgrid_corun, std::vector<char*>(argv + split + 1, argv + argc),
                       Written{req.out_dir, created, before});
}

}  // namespace corun::cli
