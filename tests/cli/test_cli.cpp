// The corun executable end to end: usage errors (exit 2), configuration errors (exit 1), a tiny training run
// with JSON / .npy output and --load, and `corun info`.
#include <corun/error.hpp>
#include <corun/npy.hpp>

#include "base/json.hpp"
#include "common/cli_run.hpp"
#include "common/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifndef CORUN_EXE
#error "CORUN_EXE must be defined to the path of the corun executable"
#endif

namespace {

namespace fs = std::filesystem;
namespace json = corun::json;

using corun::testing::CommandResult;
using corun::testing::read_file;
using corun::testing::shell_quote;
using Result = CommandResult;

class Cli : public corun::testing::TempDirTest {
 protected:
  Cli() : TempDirTest("cli") {}

  // Runs corun with `args` in the temp dir. `env` are extra NAME=value settings; CORUN_SCHED and STARPU_SCHED
  // from the caller's environment are removed so each test controls the policy.
  Result run(const std::string& args, const std::string& env = "") {
    return corun::testing::run_command(
        dir_, "env -u CORUN_SCHED -u STARPU_SCHED " + env + " " + shell_quote(CORUN_EXE) + " " + args);
  }
};

using corun::testing::contains;

const std::string kTiny = "--model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1";

// ------------------------------------------------------------------------------------------ usage: exit 2

TEST_F(Cli, NoCommandIsUsageError) {
  const Result r = run("");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "usage: corun <command>");
}

TEST_F(Cli, TopLevelHelp) {
  for (const char* h : {"--help", "-h"}) {
    const Result r = run(h);
    EXPECT_EQ(r.code, 0) << r;
    EXPECT_HAS(r.out, "usage: corun <command>");
    EXPECT_HAS(r.out, "train");
    EXPECT_HAS(r.out, "info");
  }
}

TEST_F(Cli, UnknownCommand) {
  const Result r = run("frobnicate --model lstm");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "unknown command 'frobnicate'");
  EXPECT_HAS(r.err, "usage: corun <command>");
}

TEST_F(Cli, UnknownFlag) {
  const Result r = run("train --model lstm --bogus 3");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "unknown argument '--bogus'");
  EXPECT_HAS(r.err, "usage: corun train");
  EXPECT_HAS(r.err, "--iters");  // the flag list
  // Positional junk is not silently ignored either.
  const Result r2 = run("train --model lstm extra");
  EXPECT_EQ(r2.code, 2) << r2;
  EXPECT_HAS(r2.err, "'extra'");
}

TEST_F(Cli, MissingValue) {
  const Result r = run("train --model lstm --iters");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "--iters needs a value");
  EXPECT_HAS(r.err, "usage: corun train");
  const Result r2 = run("train --model");
  EXPECT_EQ(r2.code, 2) << r2;
  EXPECT_HAS(r2.err, "--model needs a value");
}

TEST_F(Cli, NonPositiveOrMalformedSizes) {
  for (const char* bad : {"--hidden 0", "--iters -1", "--batch abc", "--seq 1.5", "--layers 3x",
                          "--iters=", "--hidden 99999999999999999999", "--lr 0", "--lr -0.1", "--lr nan"}) {
    SCOPED_TRACE(bad);
    const Result r = run(std::string("train --model lstm ") + bad);
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_HAS(r.err, "needs a positive");
    EXPECT_HAS(r.err, "usage: corun train");
  }
}

TEST_F(Cli, OtherUsageErrors) {
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c :
       {Case{"train --model gru", "unknown model 'gru'"}, Case{"train --iters 1", "--model is required"},
        Case{"train --model lstm --size huge", "--size must be small, medium or large"},
        Case{"train --model lstm --cell gru", "--cell must be fused or unfused"},
        Case{"train --model lstm --iters 1 --iters 2", "--iters given twice"},
        Case{"train --model lstm --help=yes", "--help takes no value"},
        Case{"info --bogus", "unknown argument '--bogus'"}}) {
    SCOPED_TRACE(c.args);
    const Result r = run(c.args);
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_HAS(r.err, c.message);
  }
}

TEST_F(Cli, TrainHelp) {
  const Result r = run("train --help");
  EXPECT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "usage: corun train");
  for (const char* flag : {"--model", "--size", "--layers", "--batch", "--seq", "--hidden", "--iters", "--lr", "--seed",
                           "--json", "--save", "--load", "--dump-grads", "--cell", "--fuse-elementwise"})
    EXPECT_HAS(r.out, flag);
  EXPECT_TRUE(r.err.empty()) << r;
  const Result ri = run("info --help");
  EXPECT_EQ(ri.code, 0) << ri;
  EXPECT_HAS(ri.out, "usage: corun info");
}

// ------------------------------------------------------------------------- configuration errors: exit 1

TEST_F(Cli, UnknownPolicy) {
  const Result r = run("train " + kTiny, "CORUN_SCHED=nosuch CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_SCHED='nosuch'");
  for (const char* name : {"eager", "lws", "dmdas", "pheft"}) EXPECT_HAS(r.err, name);
  EXPECT_FALSE(contains(r.out, "| iterations |")) << r;
}

TEST_F(Cli, UnknownPolicyFromStarpuSched) {
  const Result r = run("train " + kTiny, "STARPU_SCHED=nosuch CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "STARPU_SCHED='nosuch'");
  EXPECT_HAS(r.err, "lws");
}

TEST_F(Cli, PolicyHelp) {
  const Result r = run("train " + kTiny, "CORUN_SCHED=help");
  EXPECT_EQ(r.code, 0) << r;
  for (const char* name : {"eager", "lws", "dmdas", "pheft"}) EXPECT_HAS(r.out, std::string("  ") + name + "\t");
  EXPECT_HAS(r.out, "default: lws");
  EXPECT_FALSE(contains(r.out, "| iterations |")) << "help must not train\n" << r;
}

TEST_F(Cli, ConflictingPolicies) {
  const Result r = run("train " + kTiny, "CORUN_SCHED=eager STARPU_SCHED=lws CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_SCHED=eager");
  EXPECT_HAS(r.err, "STARPU_SCHED=lws");
}

TEST_F(Cli, MalformedEnvironment) {
  const Result r = run("train " + kTiny, "CORUN_KERNELS=turbo CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_KERNELS='turbo'");
  EXPECT_HAS(r.err, "fast, ref");
  const Result q = run("train " + kTiny, "CORUN_QUIET=yes");
  EXPECT_EQ(q.code, 1) << q;
  EXPECT_HAS(q.err, "CORUN_QUIET='yes'");
}

// ------------------------------------------------------------------------------------- the results table

// The first markdown row whose first cell is `first_cell`, split into trimmed cells.
std::vector<std::string> table_row(const std::string& text, const std::string& first_cell) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("|", 0) != 0) continue;
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream ls(line.substr(1));
    while (std::getline(ls, cell, '|')) {
      const auto a = cell.find_first_not_of(' ');
      const auto b = cell.find_last_not_of(' ');
      cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
    }
    if (!cells.empty() && cells[0] == first_cell) return cells;
  }
  return {};
}

// The row following the header and separator lines.
std::vector<std::string> table_data_row(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("|", 0) == 0) lines.push_back(line);
  if (lines.size() < 3) return {};
  const std::string row = lines[2];
  std::vector<std::string> cells;
  std::istringstream ls(row.substr(1));
  for (std::string cell; std::getline(ls, cell, '|');) {
    const auto a = cell.find_first_not_of(' ');
    const auto b = cell.find_last_not_of(' ');
    cells.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  return cells;
}

int column(const std::vector<std::string>& header, const std::string& name) {
  for (size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

// ------------------------------------------------------------------------------------------ full runs

TEST_F(Cli, TinyTrainingRunWithOutputs) {
  const std::string json = path("run.json"), save = path("params"), grads = path("grads");
  const Result r = run("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 3 --json " +
                           shell_quote(json) + " --save " + shell_quote(save) + " --dump-grads " + shell_quote(grads),
                       "CORUN_QUIET=1");
  ASSERT_EQ(r.code, 0) << r;

  // Results table.
  const auto header = table_row(r.out, "iterations");
  ASSERT_FALSE(header.empty()) << r;
  for (const char* col :
       {"iterations", "median ms/iter", "min ms/iter", "tasks/iter", "policy", "workers", "final loss"})
    EXPECT_GE(column(header, col), 0) << "column '" << col << "' missing\n" << r;
  const auto row = table_data_row(r.out);
  ASSERT_EQ(row.size(), header.size()) << r;
  EXPECT_EQ(row[static_cast<size_t>(column(header, "iterations"))], "3");
  EXPECT_EQ(row[static_cast<size_t>(column(header, "policy"))], "lws");
  EXPECT_GT(std::stoi(row[static_cast<size_t>(column(header, "workers"))]), 0);
  EXPECT_GT(std::stoi(row[static_cast<size_t>(column(header, "tasks/iter"))]), 0);
  const double med = std::stod(row[static_cast<size_t>(column(header, "median ms/iter"))]);
  const double best = std::stod(row[static_cast<size_t>(column(header, "min ms/iter"))]);
  EXPECT_GE(med, best);
  const double final_loss = std::stod(row[static_cast<size_t>(column(header, "final loss"))]);
  EXPECT_TRUE(std::isfinite(final_loss) && final_loss > 0.0) << final_loss;
  // CORUN_QUIET=1: no configuration line.
  EXPECT_FALSE(contains(r.err, "policy=")) << r;

  // JSON result file: valid, with every section; no temporary left behind.
  ASSERT_TRUE(fs::exists(json)) << r;
  for (const auto& e : fs::directory_iterator(dir_))  // no temporary file left beside it
    EXPECT_EQ(e.path().filename().string().find("run.json.tmp"), std::string::npos) << e.path();
  const std::string text = read_file(json);
  const json::Value j = json::parse(text, "run.json");  // strict: a syntax error fails the test
  ASSERT_TRUE(j.is_object());
  for (const char* key : {"config", "machine", "engine", "ms_per_iter", "loss", "summary"})
    ASSERT_TRUE(j.contains(key)) << "key '" << key << "' missing: " << text;
  const json::Value& cfg = j.at("config");
  EXPECT_EQ(cfg.at("model"), "lstm");
  EXPECT_EQ(cfg.at("layers"), 1);
  EXPECT_EQ(cfg.at("seq"), 3);
  EXPECT_EQ(cfg.at("hidden"), 8);
  EXPECT_EQ(cfg.at("batch"), 4);
  EXPECT_EQ(cfg.at("iters"), 3);
  EXPECT_EQ(cfg.at("cell"), "fused");
  EXPECT_TRUE(cfg.at("fuse_elementwise").is_boolean());
  EXPECT_EQ(j.at("engine").at("policy"), "lws");
  EXPECT_EQ(j.at("engine").at("policy_source"), "default");
  EXPECT_GT(j.at("engine").at("workers"), 0);
  EXPECT_GT(j.at("machine").at("nproc"), 0);
  const json::Value& ms = j.at("ms_per_iter");
  const json::Value& loss = j.at("loss");
  ASSERT_TRUE(ms.is_array());
  ASSERT_EQ(ms.size(), 3u);
  ASSERT_EQ(loss.size(), 3u);
  for (const auto& v : ms) EXPECT_GT(v.get<double>(), 0.0);
  for (const auto& v : loss) {
    ASSERT_TRUE(v.is_number());
    EXPECT_TRUE(std::isfinite(v.get<double>()) && v.get<double>() > 0.0);
  }
  EXPECT_DOUBLE_EQ(j.at("summary").at("final_loss").get<double>(), loss[2].get<double>());
  EXPECT_NEAR(final_loss, loss[2].get<double>(), 1e-4);
  EXPECT_EQ(j.at("summary").at("tasks_per_iter").get<double>(),
            std::stod(row[static_cast<size_t>(column(header, "tasks/iter"))]));

  // Saved parameters and gradients: loadable, with the parameter shapes (W_l is [input + hidden, 4 hidden]).
  const std::map<std::string, corun::Shape> shapes{{"w0", corun::Shape{16, 32}},
                                                   {"b0", corun::Shape{32}},
                                                   {"w_out", corun::Shape{8, 10}},
                                                   {"b_out", corun::Shape{10}}};
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(save)) {
    ++files;
    EXPECT_EQ(e.path().extension(), ".npy") << e.path();
  }
  EXPECT_EQ(files, shapes.size());
  for (const auto& [name, shape] : shapes) {
    SCOPED_TRACE(name);
    const corun::NpyArray p = corun::load_npy(save + "/" + name + ".npy");
    EXPECT_EQ(p.shape, shape);
    const corun::NpyArray g = corun::load_npy(grads + "/" + name + ".grad.npy");
    EXPECT_EQ(g.shape, shape);
    bool all_finite = true, any_nonzero = false;
    for (float v : g.data) {
      all_finite = all_finite && std::isfinite(v);
      any_nonzero = any_nonzero || v != 0.0f;
    }
    EXPECT_TRUE(all_finite);
    EXPECT_TRUE(any_nonzero) << "gradient is all zeros";
  }

  // --load of the saved parameters: a run starting from them works (and starts from a lower loss than the
  // fresh initialisation did on the same first batch, since they were trained on it).
  const Result l =
      run("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1 --load " + shell_quote(save),
          "CORUN_QUIET=1");
  ASSERT_EQ(l.code, 0) << l;
  const auto lheader = table_row(l.out, "iterations");
  const auto lrow = table_data_row(l.out);
  ASSERT_EQ(lrow.size(), lheader.size()) << l;
  const int first_col = column(lheader, "first loss");
  ASSERT_GE(first_col, 0) << l;
  EXPECT_NE(std::stod(lrow[static_cast<size_t>(first_col)]),
            std::stod(row[static_cast<size_t>(column(header, "first loss"))]))
      << "--load did not change the starting parameters\n"
      << l;

  // --load with a corrupt file: exit 1 naming the file.
  const std::string bad = path("bad");
  fs::create_directories(bad);
  for (const auto& [name, shape] : shapes) fs::copy_file(save + "/" + name + ".npy", bad + "/" + name + ".npy");
  {
    std::ofstream out(bad + "/b0.npy", std::ios::binary | std::ios::trunc);
    out << "garbage, not an npy file";
  }
  const Result c =
      run("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1 --load " + shell_quote(bad),
          "CORUN_QUIET=1");
  EXPECT_EQ(c.code, 1) << c;
  EXPECT_HAS(c.err, bad + "/b0.npy");
  EXPECT_HAS(c.err, "not a usable .npy file");

  // --load with a file of the wrong shape: exit 1 naming the parameter and both shapes.
  const std::vector<float> zeros(20, 0.0f);
  corun::save_npy(bad + "/b0.npy", corun::Shape{20}, zeros.data());
  const Result s =
      run("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1 --load " + shell_quote(bad),
          "CORUN_QUIET=1");
  EXPECT_EQ(s.code, 1) << s;
  EXPECT_HAS(s.err, "'b0'");
  EXPECT_HAS(s.err, "[32]");
  EXPECT_HAS(s.err, "[20]");

  // --load from a directory missing a file: exit 1 naming it.
  fs::remove(bad + "/w_out.npy");
  corun::save_npy(bad + "/b0.npy", corun::Shape{32}, std::vector<float>(32, 0.0f).data());
  const Result m =
      run("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1 --load " + shell_quote(bad),
          "CORUN_QUIET=1");
  EXPECT_EQ(m.code, 1) << m;
  EXPECT_HAS(m.err, bad + "/w_out.npy");
}

// The unfused cell needs more tasks per iteration, and the elementwise fusion pass fewer; all three graphs
// train to the same loss (the same numbers; the table prints 4 decimals).
TEST_F(Cli, CellAndElementwiseFusionChangeTasksNotLoss) {
  struct Row {
    int tasks = 0;
    double loss = 0.0;
  };
  auto train = [&](const std::string& extra) {
    const Result r = run("train --model lstm --layers 2 --seq 4 --hidden 8 --batch 4 --iters 2 " + extra, "CORUN_QUIET=1");
    EXPECT_EQ(r.code, 0) << r;
    const auto header = table_row(r.out, "iterations");
    const auto row = table_data_row(r.out);
    Row out;
    if (header.empty() || row.size() != header.size()) {
      ADD_FAILURE() << "no results table\n" << r;
      return out;
    }
    out.tasks = std::stoi(row[static_cast<size_t>(column(header, "tasks/iter"))]);
    out.loss = std::stod(row[static_cast<size_t>(column(header, "final loss"))]);
    return out;
  };
  const Row fused = train("");
  const Row unfused = train("--cell unfused");
  const Row unfused_ew = train("--cell unfused --fuse-elementwise");
  EXPECT_LT(fused.tasks, unfused.tasks);
  EXPECT_LT(unfused_ew.tasks, unfused.tasks);
  EXPECT_NEAR(unfused.loss, fused.loss, 1.5e-4);
  EXPECT_NEAR(unfused_ew.loss, unfused.loss, 1.5e-4);
}

TEST_F(Cli, ConfigLinePrintedUnlessQuiet) {
  const Result r = run("train " + kTiny, "CORUN_SCHED=eager");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.err, "policy=eager");
  EXPECT_HAS(r.err, "from CORUN_SCHED");
  const auto header = table_row(r.out, "iterations");
  const auto row = table_data_row(r.out);
  ASSERT_EQ(row.size(), header.size()) << r;
  EXPECT_EQ(row[static_cast<size_t>(column(header, "policy"))], "eager");
}

TEST_F(Cli, StarpuSchedAloneIsUsed) {
  const Result r = run("train " + kTiny + " --json " + shell_quote(path("r.json")), "STARPU_SCHED=eager CORUN_QUIET=1");
  ASSERT_EQ(r.code, 0) << r;
  const json::Value j = json::parse_file(path("r.json"));
  EXPECT_EQ(j.at("engine").at("policy"), "eager");
  EXPECT_EQ(j.at("engine").at("policy_source"), "STARPU_SCHED");
}

TEST_F(Cli, UnwritableOutputIsRuntimeError) {
  // A --save target that is a regular file cannot become a directory: exit 1 with the path.
  { std::ofstream(path("file")) << "x"; }
  const Result r = run("train " + kTiny + " --save " + shell_quote(path("file") + "/sub"), "CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, path("file"));
}

// ----------------------------------------------------------------------------------------------- info

TEST_F(Cli, Info) {
  const Result r = run("info");
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
  const Result r = run("info", "STARPU_NCPU=1");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "workers      1 CPU");
  EXPECT_HAS(r.out, "  worker 0 ");
  EXPECT_FALSE(contains(r.out, "  worker 1 ")) << r;
}

TEST_F(Cli, InfoBadPolicy) {
  const Result r = run("info", "CORUN_SCHED=nosuch");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "CORUN_SCHED='nosuch'");
  const Result h = run("info", "CORUN_SCHED=eager STARPU_SCHED=dmdas");
  EXPECT_EQ(h.code, 1) << h;
  EXPECT_HAS(h.err, "STARPU_SCHED=dmdas");
}

TEST_F(Cli, InfoPolicyHelp) {
  const Result r = run("info", "CORUN_SCHED=help");
  EXPECT_EQ(r.code, 0) << r;
  for (const char* name : {"eager", "lws", "dmdas", "pheft"}) EXPECT_HAS(r.out, std::string("  ") + name + "\t");
}

// A tiny LSTM keeps the profiler quick, even oversubscribed (STARPU_NCPU=8 tries 4 layouts there).
const char* kTinyLstm = "--model lstm --layers 1 --seq 2 --hidden 16 --batch 8";

TEST_F(Cli, ProfileWritesAProfileThatTrainLoads) {
  const std::string home = "STARPU_HOME=" + shell_quote(dir_);
  const Result p = run(std::string("profile ") + kTinyLstm + " --iters 1 --rounds 1 --calibration-iters 2 -o prof.txt",
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

  const Result t = run(std::string("train ") + kTinyLstm + " --iters 2", home + " CORUN_SCHED=cpf CORUN_PROFILE=prof.txt");
  ASSERT_EQ(t.code, 0) << t;
  EXPECT_HAS(t.err, "(CORUN_PROFILE)");
  EXPECT_HAS(t.out, "| cpf |");
}

TEST_F(Cli, ProfileUsageErrors) {
  EXPECT_EQ(run("profile").code, 2);
  const Result r = run(std::string("profile ") + kTinyLstm + " --policy lws");
  EXPECT_EQ(r.code, 2) << r;
  EXPECT_HAS(r.err, "--policy must be one of corun's policies");
  EXPECT_EQ(run(std::string("profile ") + kTinyLstm + " --rounds 0").code, 2);
}

TEST_F(Cli, TrainRejectsABadProfileOrLayout) {
  std::ofstream(path("bad.txt")) << "not a profile\n";
  const Result r = run(std::string("train ") + kTinyLstm + " --iters 1", "CORUN_SCHED=cpf CORUN_PROFILE=bad.txt");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "bad.txt");
  EXPECT_HAS(r.err, "not a corun profile");
  const Result b = run(std::string("train ") + kTinyLstm + " --iters 1", "CORUN_SCHED=lws CORUN_EXECUTORS=1x1");
  EXPECT_EQ(b.code, 1) << b;
  EXPECT_HAS(b.err, "CORUN_EXECUTORS");
}

TEST_F(Cli, TrainWithCpfPrintsTheLowerBound) {
  const Result r = run(std::string("train ") + kTinyLstm + " --iters 14",
                       "STARPU_HOME=" + shell_quote(dir_) + " CORUN_SCHED=cpf");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "lower bound");
}

TEST_F(Cli, TrainWithCorunExplainsPlacementsAndFreezesASchedule) {
  const std::string env = "STARPU_HOME=" + shell_quote(dir_) + " CORUN_SCHED=corun";
  const Result v = run(std::string("train ") + kTinyLstm + " --iters 4 --trace c.trace.json", env + " CORUN_VERBOSE=sched");
  ASSERT_EQ(v.code, 0) << v;
  EXPECT_HAS(v.err, "corun sched: ");      // every placement, with its reason
  EXPECT_HAS(v.err, "fixed [0,");          // the width search pins the first runs to the first cores
  EXPECT_HAS(read_file(path("c.trace.json")), "\"reason\":");
  const std::string det = env + " CORUN_DETERMINISTIC=1 CORUN_SCHEDULE=" + shell_quote(path("s.sched"));
  const Result d = run(std::string("train ") + kTinyLstm + " --iters 14", det);
  ASSERT_EQ(d.code, 0) << d;
  EXPECT_HAS(read_file(path("s.sched")), "{\"format\":\"corun-schedule\",\"version\":1,");
  const Result bad = run(std::string("train ") + kTinyLstm + " --iters 1", env + " CORUN_DETERMINISTIC=yes");
  EXPECT_EQ(bad.code, 1) << bad;
  EXPECT_HAS(bad.err, "CORUN_DETERMINISTIC");
}

TEST_F(Cli, TrainReportsProgressAsLinesInBatchAndOneRedrawnLineOnATerminal) {
  const std::string args = std::string("train ") + kTinyLstm + " --iters 6";
  const Result batch = run(args + " --progress-every 2");  // stderr is a file here: batch mode
  ASSERT_EQ(batch.code, 0) << batch;
  EXPECT_HAS(batch.err, "corun: iteration 2/6 ");
  EXPECT_HAS(batch.err, "corun: iteration 4/6 ");
  EXPECT_HAS(batch.err, "corun: iteration 6/6 ");
  EXPECT_FALSE(contains(batch.err, "iteration 3/6")) << batch;
  EXPECT_HAS(batch.err, " ms/iter  loss ");
  EXPECT_HAS(batch.err, "ETA ");
  EXPECT_EQ(run(args + " --progress-every 0").code, 2);
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script (util-linux) is missing";
  // On a terminal (script(1) gives it one): every iteration redraws one line with \r.
  const Result tty = corun::testing::run_command(
      dir_, "env -u CORUN_SCHED -u STARPU_SCHED script -qec " +
                shell_quote(shell_quote(CORUN_EXE) + " " + args) + " /dev/null");
  ASSERT_EQ(tty.code, 0) << tty;
  EXPECT_HAS(tty.out, "\riteration 3/6 ");
  EXPECT_FALSE(contains(tty.out, "corun: iteration")) << tty;
}

// Nodes still without a prediction after a cpf run, from its "lower bound" line (0 when it has a ratio).
int uncalibrated_nodes(const std::string& out) {
  const auto at = out.find("lower bound: n/a (");
  if (at == std::string::npos) return contains(out, "ratio") ? 0 : -1;
  return std::atoi(out.c_str() + at + std::strlen("lower bound: n/a ("));
}

TEST_F(Cli, ModelsAreSavedAndReusedByTheNextRun) {
  const std::string env = "STARPU_HOME=" + shell_quote(dir_) + " CORUN_SCHED=cpf";
  const Result first = run(std::string("train ") + kTinyLstm + " --iters 1", env);
  ASSERT_EQ(first.code, 0) << first;
  const int before = uncalibrated_nodes(first.out);
  EXPECT_GT(before, 10) << first;  // nothing measured yet
  const Result calibrate = run(std::string("train ") + kTinyLstm + " --iters 15", env);
  ASSERT_EQ(calibrate.code, 0) << calibrate;
  // A new process predicts the nodes from its first iteration on: the models were saved under the machine
  // key at shutdown and loaded again. (StarPU may still flush the odd sub-µs op whose samples scatter on a
  // loaded machine, so "almost all" rather than "all".)
  const Result again = run(std::string("train ") + kTinyLstm + " --iters 1", env);
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
    const Result t = run(std::string("train ") + kTinyLstm + " --iters 2 --trace run.trace.json",
                         "STARPU_HOME=" + shell_quote(dir_) + " CORUN_SCHED=" + policy);
    ASSERT_EQ(t.code, 0) << t;
    EXPECT_HAS(t.out, "trace of the last iteration: run.trace.json");
    const std::string trace = read_file(path("run.trace.json"));
    EXPECT_HAS(trace, "\"traceEvents\"");
    EXPECT_HAS(trace, std::string("\"policy\":\"") + policy + "\"");
    const Result p = run("plot-trace run.trace.json -o run.svg");
    ASSERT_EQ(p.code, 0) << p;
    EXPECT_HAS(read_file(path("run.svg")), "<svg");
  }
}

}  // namespace
