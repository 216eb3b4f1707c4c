// The corun executable end to end, part 2: training runs with JSON / .npy output and --load, the results
// table, the policy variables of a run.
#include <corun/error.hpp>
#include <corun/npy.hpp>

#include "base/json.hpp"
#include "cli_fixture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
namespace json = corun::json;

using corun::testing::Cli;
using corun::testing::column;
using corun::testing::contains;
using corun::testing::kTiny;
using corun::testing::read_file;
using corun::testing::Result;
using corun::testing::shell_quote;
using corun::testing::table_data_row;
using corun::testing::table_row;

// ------------------------------------------------------------------------------------------ full runs

TEST_F(Cli, TinyTrainingRunWithOutputs) {
  const std::string json = path("run.json"), save = path("params"), grads = path("grads");
  const Result r = corun("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 3 --json " +
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
      corun("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1 --load " + shell_quote(save),
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
      corun("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1 --load " + shell_quote(bad),
          "CORUN_QUIET=1");
  EXPECT_EQ(c.code, 1) << c;
  EXPECT_HAS(c.err, bad + "/b0.npy");
  EXPECT_HAS(c.err, "not a usable .npy file");

  // --load with a file of the wrong shape: exit 1 naming the parameter and both shapes.
  const std::vector<float> zeros(20, 0.0f);
  corun::save_npy(bad + "/b0.npy", corun::Shape{20}, zeros.data());
  const Result s =
      corun("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1 --load " + shell_quote(bad),
          "CORUN_QUIET=1");
  EXPECT_EQ(s.code, 1) << s;
  EXPECT_HAS(s.err, "'b0'");
  EXPECT_HAS(s.err, "[32]");
  EXPECT_HAS(s.err, "[20]");

  // --load from a directory missing a file: exit 1 naming it.
  fs::remove(bad + "/w_out.npy");
  corun::save_npy(bad + "/b0.npy", corun::Shape{32}, std::vector<float>(32, 0.0f).data());
  const Result m =
      corun("train --model lstm --layers 1 --seq 3 --hidden 8 --batch 4 --iters 1 --load " + shell_quote(bad),
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
    const Result r = corun("train --model lstm --layers 2 --seq 4 --hidden 8 --batch 4 --iters 2 " + extra, "CORUN_QUIET=1");
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
  const Result r = corun("train " + kTiny, "CORUN_SCHED=eager");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.err, "policy=eager");
  EXPECT_HAS(r.err, "from CORUN_SCHED");
  const auto header = table_row(r.out, "iterations");
  const auto row = table_data_row(r.out);
  ASSERT_EQ(row.size(), header.size()) << r;
  EXPECT_EQ(row[static_cast<size_t>(column(header, "policy"))], "eager");
}

TEST_F(Cli, StarpuSchedAloneIsUsed) {
  const Result r = corun("train " + kTiny + " --json " + shell_quote(path("r.json")), "STARPU_SCHED=eager CORUN_QUIET=1");
  ASSERT_EQ(r.code, 0) << r;
  const json::Value j = json::parse_file(path("r.json"));
  EXPECT_EQ(j.at("engine").at("policy"), "eager");
  EXPECT_EQ(j.at("engine").at("policy_source"), "STARPU_SCHED");
}

TEST_F(Cli, UnwritableOutputIsRuntimeError) {
  // A --save target that is a regular file cannot become a directory: exit 1 with the path.
  { std::ofstream(path("file")) << "x"; }
  const Result r = corun("train " + kTiny + " --save " + shell_quote(path("file") + "/sub"), "CORUN_QUIET=1");
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, path("file"));
}
// Issue 52 item 7: a result file says how its loss was reached: the optimizer, its settings and the
// learning-rate schedule, the model's default included.
TEST_F(Cli, JsonRecordsTheOptimizerAndTheSchedule) {
  Result r = corun("train " + kTiny + " --json " + shell_quote(path("sgd.json")), "CORUN_QUIET=1");
  ASSERT_EQ(r.code, 0) << r;
  const json::Value sgd = json::parse_file(path("sgd.json")).at("config").at("optimizer");
  EXPECT_EQ(sgd.at("name"), "sgd") << sgd.dump();
  EXPECT_EQ(sgd.at("momentum"), 0.0) << sgd.dump();
  EXPECT_EQ(sgd.at("lr_schedule"), "constant") << sgd.dump();
  EXPECT_EQ(sgd.at("model_default"), true) << sgd.dump();
  r = corun("train " + kTiny + " --optimizer adamw --weight-decay 0.01 --lr-schedule cosine --warmup 2 --json " +
              shell_quote(path("adamw.json")),
          "CORUN_QUIET=1");
  ASSERT_EQ(r.code, 0) << r;
  const json::Value adamw = json::parse_file(path("adamw.json")).at("config").at("optimizer");
  EXPECT_EQ(adamw.at("name"), "adamw") << adamw.dump();
  EXPECT_NEAR(adamw.at("weight_decay").get<double>(), 0.01, 1e-7) << adamw.dump();
  EXPECT_NEAR(adamw.at("beta2").get<double>(), 0.999, 1e-7) << adamw.dump();
  EXPECT_EQ(adamw.at("lr_schedule"), "cosine:0") << adamw.dump();
  EXPECT_EQ(adamw.at("warmup"), 2) << adamw.dump();
}

}  // namespace
