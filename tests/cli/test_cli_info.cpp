// The corun executable end to end, part 3: `corun info`, `corun profile` and the profile it writes, the
// cpf and corun policies in `corun train`, progress output, saved models and traces.
#include "cli_fixture.hpp"

#include "base/json.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;

using corun::testing::Cli;
using corun::testing::contains;
using corun::testing::kTiny;
using corun::testing::read_file;
using corun::testing::Result;
using corun::testing::shell_quote;

// ----------------------------------------------------------------------------------------------- info

// OpenBLAS on pre-AVX2 kernels on a CPU with AVX2 (0.3.21 took a recent Xeon under KVM for a Prescott) is a
// warning naming the OPENBLAS_CORETYPE to set; a suitable core is none.
TEST_F(Cli, InfoWarnsWhenOpenBlasRunsKernelsOlderThanTheCpu) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "this CPU has no AVX2";
  const Result slow = corun("info", "OPENBLAS_CORETYPE=Prescott");
  ASSERT_EQ(slow.code, 0) << slow;
  EXPECT_HAS(slow.out, "core Prescott");
  EXPECT_HAS(slow.out, "warning      OpenBLAS runs its Prescott kernels (no AVX2)");
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                     __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  EXPECT_HAS(slow.out, avx512 ? "set OPENBLAS_CORETYPE=SkylakeX" : "set OPENBLAS_CORETYPE=Haswell");
  // The core that suits the CPU: no warning.
  const char* suitable = avx512 ? "SkylakeX" : "Haswell";
  const Result fine = corun("info", std::string("OPENBLAS_CORETYPE=") + suitable);
  ASSERT_EQ(fine.code, 0) << fine;
  EXPECT_HAS(fine.out, std::string("core ") + suitable);
  EXPECT_EQ(fine.out.find("OpenBLAS runs its"), std::string::npos) << fine;
  // An AVX-512 CPU on AVX2 kernels (a Zen 5 under 0.3.21 ran as Haswell): a note naming SkylakeX.
  if (!avx512) return;
  const Result avx2 = corun("info", "OPENBLAS_CORETYPE=Haswell");
  ASSERT_EQ(avx2.code, 0) << avx2;
  EXPECT_HAS(avx2.out, "OpenBLAS runs its Haswell kernels (AVX2) on a CPU with AVX-512");
}

TEST_F(Cli, Info) {
  const Result r = corun("info");
  ASSERT_EQ(r.code, 0) << r;
  for (const char* part : {"cpu", "topology", "affinity", "starpu", "STARPU_MAXCPUS", "STARPU_MAXNUMANODES", "policy",
                           "workers", "blas", "git"})
    EXPECT_HAS(r.out, part);
  // "workers      N CPU" followed by one binding line per worker.
  std::istringstream in(r.out);
  int workers = -1, bindings = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("workers", 0) == 0) workers = std::atoi(line.substr(7).c_str());
    if (line.rfind("  worker ", 0) == 0) {
      ++bindings;
      EXPECT_HAS(line, "bindid");
      EXPECT_HAS(line, "runs on cpus");
    }
  }
  EXPECT_GT(workers, 0) << r;
  EXPECT_EQ(bindings, workers) << r;
}

TEST_F(Cli, InfoWithOneWorker) {
  const Result r = corun("info", "STARPU_NCPU=1");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "workers      1 CPU");
  EXPECT_HAS(r.out, "  worker 0 ");
  EXPECT_FALSE(contains(r.out, "  worker 1 ")) << r;
}

TEST_F(Cli, InfoBadPolicy) {
  const Result r = corun("info", "CORUN_SCHED=nosuch");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_SCHED='nosuch'");
  const Result h = corun("info", "CORUN_SCHED=eager STARPU_SCHED=dmdas");
  EXPECT_EQ(h.code, 1) << h;
  EXPECT_HAS(h.err, "STARPU_SCHED=dmdas");
}

TEST_F(Cli, InfoPolicyHelp) {
  const Result r = corun("info", "CORUN_SCHED=help");
  EXPECT_EQ(r.code, 0) << r;
  for (const char* name : {"eager", "lws", "dmdas", "pheft"}) EXPECT_HAS(r.out, std::string("  ") + name + "\t");
}

// A tiny LSTM keeps the profiler quick, even oversubscribed (STARPU_NCPU=8 tries 4 layouts there).
const char* kTinyLstm = "--model lstm --layers 1 --seq 2 --hidden 16 --batch 8";

TEST_F(Cli, ProfileWritesAProfileThatTrainLoads) {
  const std::string home = "STARPU_HOME=" + shell_quote(dir_);
  const Result p = corun(std::string("profile ") + kTinyLstm + " --iters 1 --rounds 1 --calibration-iters 2 -o prof.txt",
                       home);
  ASSERT_EQ(p.code, 0) << p;
  EXPECT_HAS(p.out, "| layout | executors |");
  EXPECT_HAS(p.out, "(chosen)");
  EXPECT_HAS(p.out, "CORUN_PROFILE=prof.txt");
  const std::string prof = read_file(path("prof.txt"));
  EXPECT_HAS(prof, "\"format\": \"corun-profile\"");
  EXPECT_HAS(prof, "\"layout\": ");
  EXPECT_HAS(prof, "\"tried\": [");
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary file left beside it
    EXPECT_EQ(e.path().filename().string().find("prof.txt.tmp"), std::string::npos) << e.path();

  const Result t = corun(std::string("train ") + kTinyLstm + " --iters 2", home + " CORUN_SCHED=cpf CORUN_PROFILE=prof.txt");
  ASSERT_EQ(t.code, 0) << t;
  EXPECT_HAS(t.err, "(CORUN_PROFILE)");
  EXPECT_HAS(t.out, "| cpf |");
}

// Issue 48 item 3: after `corun profile` (which calibrates every width the corun policy's climb may measure),
// `corun train` under the corun policy runs no tuning run, with the same losses as a process that searched.
TEST_F(Cli, AfterProfileTheCorunPolicySearchesNoWidth) {
  // One worker per core: oversubscribed (the suite's STARPU_NCPU=8 pass on 2 cores) the profile calibrates 8
  // widths of time-sliced teams, which StarPU flushes, and took over 120 s.
  const std::string home = "STARPU_HOME=" + shell_quote(dir_) +
                           " STARPU_NCPU=" + std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  // 30 calibration steps, not the default 16: beside other tests on the cores, StarPU flushed the entry of a
  // 2 µs kernel whose samples were mostly off, and 16 steps left it uncalibrated (then its width is searched).
  const Result p = corun(std::string("profile ") + kTinyLstm + " --iters 1 --rounds 1 --calibration-iters 30 -o prof.txt", home);
  ASSERT_EQ(p.code, 0) << p;
  const std::string train = std::string("train ") + kTinyLstm + " --iters 3 --json ";
  fs::create_directories(path("fresh"));
  const Result searched = corun(train + "searched.json", "STARPU_HOME=" + shell_quote(path("fresh")) + " CORUN_SCHED=corun" +
                                                            home.substr(home.find(" STARPU_NCPU=")));
  ASSERT_EQ(searched.code, 0) << searched;
  // The profile's models alone, not the climbs a profile round may have left in the width memory.
  const Result replayed = corun(train + "replayed.json", home + " CORUN_SCHED=corun CORUN_WIDTH_MEMORY=off");
  ASSERT_EQ(replayed.code, 0) << replayed;
  const corun::json::Value a = corun::json::parse_file(path("searched.json")), b = corun::json::parse_file(path("replayed.json"));
  EXPECT_GT(a["summary"]["tuning_runs"].get<int>(), 0) << "without models the climb measures its widths";
  EXPECT_EQ(b["summary"]["tuning_runs"].get<int>(), 0) << "the profile's models answer every climb";
  EXPECT_EQ(a["loss"].dump(), b["loss"].dump()) << "the teams never change the results";
}

// `corun profile` takes every model `corun train` knows (make_session): one of each family beside the LSTMs
// above (tiny shapes through the same flags as train: the test stays short with STARPU_NCPU=8's extra
// layouts), each writing a profile that names its model and size.
TEST_F(Cli, ProfileEveryModelFamily) {
  struct Case {
    std::string args, model, size;
  };
  for (const Case& c : {Case{"--model pathnet --size medium --image 8 --batch 2 --layers 1", "pathnet", "medium"},
                        Case{"--model wide-deep --batch 8", "wide-deep", "fixed"}}) {
    SCOPED_TRACE(c.args);
    const Result p = corun("profile " + c.args + " --iters 1 --rounds 1 --calibration-iters 2",
                         "STARPU_HOME=" + shell_quote(dir_));
    ASSERT_EQ(p.code, 0) << p;
    EXPECT_HAS(p.out, "corun profile: " + c.model + " " + c.size + ", policy cpf");
    EXPECT_HAS(p.out, "(chosen)");
    const std::string file = "corun-profile-" + c.model + "-" + c.size + ".txt";  // the default -o
    EXPECT_HAS(read_file(path(file)), "\"model\": \"" + c.model + "\"");
  }
  const Result r = corun("profile --model wide-deep --layers 2");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "--layers applies to --model");
}

TEST_F(Cli, ProfileUsageErrors) {
  EXPECT_EQ(corun("profile").code, 2);
  const Result r = corun(std::string("profile ") + kTinyLstm + " --policy lws");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "--policy must be one of corun's policies");
  EXPECT_EQ(corun(std::string("profile ") + kTinyLstm + " --rounds 0").code, 2);
}

TEST_F(Cli, TrainRejectsABadProfileOrLayout) {
  std::ofstream(path("bad.txt")) << "not a profile\n";
  const Result r = corun(std::string("train ") + kTinyLstm + " --iters 1", "CORUN_SCHED=cpf CORUN_PROFILE=bad.txt");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "bad.txt");
  EXPECT_HAS(r.err, "not a corun profile");
  const Result b = corun(std::string("train ") + kTinyLstm + " --iters 1", "CORUN_SCHED=lws CORUN_EXECUTORS=1x1");
  EXPECT_EQ(b.code, 1) << b;
  EXPECT_HAS(b.err, "CORUN_EXECUTORS");
}

TEST_F(Cli, TrainWithCpfPrintsTheLowerBound) {
  const Result r = corun(std::string("train ") + kTinyLstm + " --iters 14",
                       "STARPU_HOME=" + shell_quote(dir_) + " CORUN_SCHED=cpf");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "lower bound");
}

TEST_F(Cli, TrainWithCorunExplainsPlacementsAndFreezesASchedule) {
  const std::string env = "STARPU_HOME=" + shell_quote(dir_) + " CORUN_SCHED=corun";
  const Result v = corun(std::string("train ") + kTinyLstm + " --iters 4 --trace c.trace.json", env + " CORUN_VERBOSE=sched");
  ASSERT_EQ(v.code, 0) << v;
  EXPECT_HAS(v.err, "corun sched: ");      // every placement, with its reason
  EXPECT_HAS(v.err, "fixed [0,");          // the width search pins the first runs to the first cores
  EXPECT_HAS(read_file(path("c.trace.json")), "\"reason\":");
  const std::string det = env + " CORUN_DETERMINISTIC=1 CORUN_SCHEDULE=" + shell_quote(path("s.sched"));
  const Result d = corun(std::string("train ") + kTinyLstm + " --iters 14", det);
  ASSERT_EQ(d.code, 0) << d;
  EXPECT_HAS(read_file(path("s.sched")), "{\"format\":\"corun-schedule\",\"version\":1,");
  const Result bad = corun(std::string("train ") + kTinyLstm + " --iters 1", env + " CORUN_DETERMINISTIC=yes");
  EXPECT_EQ(bad.code, 1) << bad;
  EXPECT_HAS(bad.err, "CORUN_DETERMINISTIC");
}

TEST_F(Cli, TrainReportsProgressAsLinesInBatchAndOneRedrawnLineOnATerminal) {
  const std::string args = std::string("train ") + kTinyLstm + " --iters 6";
  const Result batch = corun(args + " --progress-every 2");  // stderr is a file here: batch mode
  ASSERT_EQ(batch.code, 0) << batch;
  EXPECT_HAS(batch.err, "corun: iteration 2/6 ");
  EXPECT_HAS(batch.err, "corun: iteration 4/6 ");
  EXPECT_HAS(batch.err, "corun: iteration 6/6 ");
  EXPECT_FALSE(contains(batch.err, "iteration 3/6")) << batch;
  EXPECT_HAS(batch.err, " ms/iter  loss ");
  EXPECT_HAS(batch.err, "ETA ");
  EXPECT_EQ(corun(args + " --progress-every 0").code, 2);
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script (util-linux) is missing";
  // On a terminal (script(1) gives it one): every iteration redraws one line with \r.
  const Result tty = corun::testing::run_command(
      dir_, corun_env() + "script -qec " + shell_quote(shell_quote(CORUN_EXE) + " " + args) + " /dev/null");
  ASSERT_EQ(tty.code, 0) << tty;
  EXPECT_HAS(tty.out, "\riteration 3/6 ");
  EXPECT_FALSE(contains(tty.out, "corun: iteration")) << tty;
}

// Nodes still without a prediction after a cpf run, from its "lower bound" line (0 when it has a ratio).
int uncalibrated_nodes(const std::string& out) {
  const std::string marker = "lower bound: not computed, ";
  const auto at = out.find(marker);
  if (at == std::string::npos) return contains(out, "ratio") ? 0 : -1;
  return std::atoi(out.c_str() + at + marker.size());
}

TEST_F(Cli, ModelsAreSavedAndReusedByTheNextRun) {
  const std::string env = "STARPU_HOME=" + shell_quote(dir_) + " CORUN_SCHED=cpf";
  const Result first = corun(std::string("train ") + kTinyLstm + " --iters 1", env);
  ASSERT_EQ(first.code, 0) << first;
  const int before = uncalibrated_nodes(first.out);
  EXPECT_GT(before, 10) << first;  // nothing measured yet
  const Result calibrate = corun(std::string("train ") + kTinyLstm + " --iters 15", env);
  ASSERT_EQ(calibrate.code, 0) << calibrate;
  // A new process predicts the nodes from its first iteration on: the models were saved under the machine
  // key at shutdown and loaded again. (StarPU may still flush the odd sub-µs op whose samples scatter on a
  // loaded machine, so "almost all" rather than "all".)
  const Result again = corun(std::string("train ") + kTinyLstm + " --iters 1", env);
  ASSERT_EQ(again.code, 0) << again;
  const int after = uncalibrated_nodes(again.out);
  EXPECT_GE(after, 0) << again;
  EXPECT_LE(after, before / 5) << again;
  bool saved = false;
  for (const auto& f : fs::recursive_directory_iterator(dir_))
    saved = saved || f.path().filename().string().rfind("corun_matmul.corun-", 0) == 0;
  EXPECT_TRUE(saved) << "no corun_matmul.<machine key> model file under " << dir_;
}

TEST_F(Cli, TrainTraceIsATimelinePlotTraceDraws) {
  for (const char* policy : {"cpf", "lws"}) {
    SCOPED_TRACE(policy);
    const Result t = corun(std::string("train ") + kTinyLstm + " --iters 2 --trace run.trace.json",
                         "STARPU_HOME=" + shell_quote(dir_) + " CORUN_SCHED=" + policy);
    ASSERT_EQ(t.code, 0) << t;
    EXPECT_HAS(t.out, "trace of the last iteration: run.trace.json");
    const std::string trace = read_file(path("run.trace.json"));
    EXPECT_HAS(trace, "\"traceEvents\"");
    EXPECT_HAS(trace, std::string("\"policy\":\"") + policy + "\"");
    const Result p = corun("plot-trace run.trace.json -o run.svg");
    ASSERT_EQ(p.code, 0) << p;
    EXPECT_HAS(read_file(path("run.svg")), "<svg");
  }
}

}  // namespace
