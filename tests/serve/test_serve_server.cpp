// corun::serve::Server on StarPU against the plain-loop reference (1e-5 relative): LSTM and GRU, single,
// stacked and bidirectional, batch 1 and 10, sequences of 1, 10 and 100 steps, under WCS and per-step
// tasks on teams of 1 and of every worker (8 in CI's oversubscribed pass); the plan search and its cache;
// .npy weights; bad requests.
#include <corun/npy.hpp>
#include <corun/serve.hpp>

#include "common/temp_dir_test.hpp"
#include "engine/engine_test_util.hpp"
#include "serve/rnn_reference.hpp"
#include "serve/runtime/plan_search.hpp"
#include "serve/runtime/team_runner.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace corun::test {
namespace {

using serve::Cell;
using serve::ExecMode;
using serve::ModelSpec;
using serve::Plan;

std::vector<float> input(int seq, int batch, int features, uint64_t seed) {
  std::mt19937_64 rng(seed);
  return uniform(rng, static_cast<int64_t>(seq) * batch * features);
}

// Each forced plan runs on one Server per batch (max_seq 100), so the plan is reused across requests. The
// WCS plan on every worker runs the whole matrix (batch 1/10 x seq 1/10/100); the others (a team of one,
// per-step tasks) run seq 10: on 8 oversubscribed workers every step costs OS time slices.
void check_model(const ModelSpec& spec) {
  Engine engine(test_config());
  const int workers = serve::starpu_cpu_workers();
  const serve::Model model = serve::Model::random(spec, 3);
  const int all = (1 << serve::gate_count(spec.cell)) - 1;
  struct Run {
    Plan plan;
    std::vector<int> seqs;
  };
  std::vector<Run> runs;
  for (ExecMode mode : {ExecMode::wcs, ExecMode::per_step, ExecMode::resident, ExecMode::on_caller})
    for (int w : {workers, 1}) {
      if (mode == ExecMode::on_caller && w != 1) continue;  // inline runs at width 1 only
      Plan p;
      p.hoisted_gates = w == 1 ? static_cast<uint32_t>(all) : 1u;
      p.workers = w;
      p.xj = std::min(w, spec.hidden);
      p.mode = mode;
      const bool full = (mode == ExecMode::wcs && w == workers) || mode == ExecMode::on_caller;
      runs.push_back({p, full ? std::vector<int>{1, 10, 100} : std::vector<int>{1, 10}});
    }
  for (const Run& r : runs)
    for (int batch : {1, 10}) {
      serve::ServeOptions opt;
      opt.forced_plan = &r.plan;
      serve::Server server(engine, model, batch, 100, opt);
      for (int seq : r.seqs) {
        const std::vector<float> x = input(seq, batch, spec.input, static_cast<uint64_t>(seq));
        const serve::FloatView y = server.infer(x, seq);
        const std::vector<float> got(y.begin(), y.end());
        const std::vector<float> want = rnn_reference(model, x, batch, seq);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_LE(normwise_rel(got, want), 1e-5)
            << spec.str() << " batch " << batch << " seq " << seq << " plan " << r.plan.str(spec.cell);
      }
    }
}

TEST(ServeServer, LstmSingleLayer) { check_model({Cell::lstm, 10, 24, 1, false}); }
TEST(ServeServer, LstmStacked) { check_model({Cell::lstm, 10, 16, 2, false}); }
TEST(ServeServer, LstmBidirectional) { check_model({Cell::lstm, 10, 16, 1, true}); }
TEST(ServeServer, GruSingleLayer) { check_model({Cell::gru, 10, 24, 1, false}); }
TEST(ServeServer, GruStacked) { check_model({Cell::gru, 10, 16, 2, false}); }
TEST(ServeServer, GruBidirectional) { check_model({Cell::gru, 10, 16, 2, true}); }

// A plan served through `mode`: outputs of every request of `seqs`, concatenated.
std::vector<float> serve_all(Engine& engine, const serve::Model& model, Plan plan, ExecMode mode, int batch,
                             const std::vector<int>& seqs, int pause_ms = 0) {
  plan.mode = mode;
  serve::ServeOptions opt;
  opt.forced_plan = &plan;
  serve::Server server(engine, model, batch, 100, opt);
  std::vector<float> all;
  for (size_t i = 0; i < seqs.size(); ++i) {
    const std::vector<float> x = input(seqs[i], batch, model.spec().input, 100 + i);
    const serve::FloatView y = server.infer(x, seqs[i]);
    all.insert(all.end(), y.begin(), y.end());
    // A pause longer than the resident team's idle time: the team has left the workers, the next request
    // starts it again.
    if (pause_ms > 0 && i % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  }
  return all;
}

// The request path does not change the results: the same plan gives the same bits through a task per
// request (wcs), a resident team and, at width 1, the calling thread; and they match the reference.
TEST(ServeServer, RequestPathsGiveBitwiseEqualOutputs) {
  Engine engine(test_config());
  const int workers = serve::starpu_cpu_workers();
  for (Cell cell : {Cell::lstm, Cell::gru}) {
    const ModelSpec spec{cell, 12, 20, 2, true};
    const serve::Model model = serve::Model::random(spec, 5);
    const std::vector<int> seqs = {1, 7, 30, 1, 12, 3};
    for (int batch : {1, 3}) {
      std::vector<float> want;
      for (size_t i = 0; i < seqs.size(); ++i) {
        const std::vector<float> r = rnn_reference(model, input(seqs[i], batch, spec.input, 100 + i), batch, seqs[i]);
        want.insert(want.end(), r.begin(), r.end());
      }
      Plan solo;
      solo.hoisted_gates = 1;
      const std::vector<float> wcs1 = serve_all(engine, model, solo, ExecMode::wcs, batch, seqs);
      EXPECT_LE(normwise_rel(wcs1, want), 1e-5) << spec.str() << " batch " << batch;
      EXPECT_TRUE(same_bits(wcs1, serve_all(engine, model, solo, ExecMode::on_caller, batch, seqs)))
          << spec.str() << " batch " << batch << ": inline differs from a task";
      EXPECT_TRUE(same_bits(wcs1, serve_all(engine, model, solo, ExecMode::resident, batch, seqs, 3)))
          << spec.str() << " batch " << batch << ": resident (width 1) differs from a task";
      Plan team;
      team.hoisted_gates = 3;
      team.workers = workers;
      team.xj = std::min(workers, spec.hidden);
      const std::vector<float> wcs = serve_all(engine, model, team, ExecMode::wcs, batch, seqs);
      EXPECT_LE(normwise_rel(wcs, want), 1e-5) << spec.str() << " batch " << batch;
      EXPECT_TRUE(same_bits(wcs, serve_all(engine, model, team, ExecMode::resident, batch, seqs, 3)))
          << spec.str() << " batch " << batch << ": resident differs from a task per request";
    }
  }
}

// Two servers whose resident teams share the same workers, used in turn: each request of one waits until
// the other's team has left the workers (idle), so they interleave without deadlock; a third server's
// per-request tasks get the workers too. Destroying a server with its team still resident ends the team.
TEST(ServeServer, ResidentTeamsOnTheSameWorkersTakeTurns) {
  Engine engine(test_config());
  const ModelSpec spec{Cell::lstm, 8, 16, 1, false};
  const serve::Model model = serve::Model::random(spec, 6);
  Plan plan;
  plan.hoisted_gates = 15;
  plan.workers = serve::starpu_cpu_workers();
  plan.xj = std::min(plan.workers, spec.hidden);
  plan.mode = ExecMode::resident;
  Plan per_task = plan;
  per_task.mode = ExecMode::wcs;
  serve::ServeOptions opt;
  opt.forced_plan = &plan;
  serve::Server a(engine, model, 2, 20, opt);
  serve::Server b(engine, model, 2, 20, opt);
  serve::ServeOptions opt_c = opt;
  opt_c.forced_plan = &per_task;
  serve::Server c(engine, model, 2, 20, opt_c);
  const std::vector<float> x = input(20, 2, spec.input, 11);
  const std::vector<float> want = rnn_reference(model, x, 2, 20);
  const serve::FloatView ya = a.infer(x, 20);
  const std::vector<float> first(ya.begin(), ya.end());
  EXPECT_LE(normwise_rel(first, want), 1e-5);
  for (int round = 0; round < 5; ++round)
    for (serve::Server* s : {&a, &b, &c}) {
      const serve::FloatView y = s->infer(x, 20);
      EXPECT_TRUE(same_bits(std::vector<float>(y.begin(), y.end()), first)) << "round " << round;
    }
  // Requests about the idle time apart: the team closes while a request may be arriving; each must still
  // be served by every member exactly once (a member that saw "closed" instead of a posted request would
  // hang the caller).
  for (int i = 0; i < 30; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(700 + 20 * i));
    const int seq = 1 + i % 3;
    const std::vector<float> xs(x.begin(), x.begin() + seq * 2 * spec.input);
    const serve::FloatView y = a.infer(xs, seq);
    EXPECT_LE(normwise_rel(std::vector<float>(y.begin(), y.end()), rnn_reference(model, xs, 2, seq)), 1e-5);
  }
  {
    serve::Server d(engine, model, 2, 20, opt);
    d.infer(x, 20);
  }  // d's team is resident here; its destructor ends it
  const serve::FloatView y = c.infer(x, 20);
  EXPECT_LE(normwise_rel(std::vector<float>(y.begin(), y.end()), want), 1e-5);
}

// When PCP splits the batch, the search also times the hidden-unit split of the same width (PCP models the
// recurrent MM alone); a hidden split from PCP gets no duplicate.
TEST(ServeCandidates, BatchSplitsComeWithTheHiddenSplit) {
  const ModelSpec spec{Cell::lstm, 64, 64, 1, false};
  const std::vector<Plan> batch64 = serve::candidate_plans(spec, 64, 100, 4, 1 << 20);
  int batch_splits = 0, hidden_splits = 0;
  for (const Plan& p : batch64)
    if (p.workers == 4) {
      batch_splits += p.xi == 4 && p.xj == 1;
      hidden_splits += p.xi == 1 && p.xj == 4;
    }
  EXPECT_EQ(batch_splits, 5);  // the 5 schedule classes of an LSTM
  EXPECT_EQ(hidden_splits, 5);
  for (const Plan& p : serve::candidate_plans(spec, 1, 100, 4, 1 << 20)) EXPECT_EQ(p.xi, 1);
  EXPECT_EQ(serve::candidate_plans(spec, 1, 100, 4, 1 << 20).size(), 5u * 4u);
}

class ServeServerFiles : public corun::testing::TempDirTest {
 protected:
  ServeServerFiles() : TempDirTest("serve") {}
};

TEST_F(ServeServerFiles, CalibratesOnceThenReadsThePlanCache) {
  ScopedEnv cache("CORUN_SERVE_PLANS", dir_.c_str());
  Engine engine(test_config());
  const ModelSpec spec{Cell::lstm, 8, 12, 1, false};
  const serve::Model model = serve::Model::random(spec, 9);
  serve::ServeOptions opt;
  opt.calibration_runs = 1;
  std::string first_plan;
  {
    serve::Server server(engine, model, 2, 5, opt);
    EXPECT_TRUE(contains(server.plan_source(), "calibrated")) << server.plan_source();
    EXPECT_GT(server.plan().calibrated_ms, 0.0);
    first_plan = server.plan().str(spec.cell);
    const std::vector<float> x = input(5, 2, 8, 1);
    EXPECT_LE(normwise_rel(std::vector<float>(server.infer(x, 5).begin(), server.infer(x, 5).end()),
                           rnn_reference(model, x, 2, 5)),
              1e-5);
  }
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_)) files += e.path().extension() == ".plan";
  EXPECT_EQ(files, 1u);
  serve::Server again(engine, model, 2, 5, opt);
  EXPECT_TRUE(contains(again.plan_source(), "cache " + dir_)) << again.plan_source();
  EXPECT_EQ(again.plan().str(spec.cell), first_plan);
  // Another shape is another key: calibrated again.
  serve::Server other(engine, model, 3, 5, opt);
  EXPECT_TRUE(contains(other.plan_source(), "calibrated")) << other.plan_source();
}

TEST_F(ServeServerFiles, NpyWeightsInPyTorchNamesGiveTheSameOutputs) {
  const ModelSpec spec{Cell::gru, 6, 8, 1, true};
  const serve::Model model = serve::Model::random(spec, 4);
  const int64_t gh = 3 * 8;
  for (int d = 0; d < 2; ++d) {
    const std::string sfx = std::string("_l0") + (d == 1 ? "_reverse" : "") + ".npy";
    const serve::CellWeights& w = model.weights(0, d);
    save_npy(path("weight_ih" + sfx), Shape{gh, 6}, w.w_ih.data());
    save_npy(path("weight_hh" + sfx), Shape{gh, 8}, w.w_hh.data());
    save_npy(path("bias_ih" + sfx), Shape{gh}, w.b_ih.data());
    save_npy(path("bias_hh" + sfx), Shape{gh}, w.b_hh.data());
  }
  const serve::Model loaded = serve::Model::load_npy(spec, dir_);
  Engine engine(test_config());
  serve::ServeOptions opt;
  opt.calibrate = false;
  opt.use_cache = false;
  serve::Server a(engine, model, 1, 10, opt);
  serve::Server b(engine, loaded, 1, 10, opt);
  const std::vector<float> x = input(10, 1, 6, 2);
  const serve::FloatView ya = a.infer(x, 10);
  const std::vector<float> va(ya.begin(), ya.end());
  const serve::FloatView yb = b.infer(x, 10);
  EXPECT_TRUE(same_bits(va, std::vector<float>(yb.begin(), yb.end())));
  EXPECT_EQ(a.plan_source(), "default");
  EXPECT_CORUN_ERROR(serve::Model::load_npy(ModelSpec{Cell::gru, 6, 8, 2, true}, dir_), Status::io_error,
                     "missing weight file", "weight_ih_l1.npy");
  // A file of the wrong shape names itself and both shapes.
  save_npy(path("bias_hh_l0.npy"), Shape{gh + 1}, std::vector<float>(gh + 1).data());
  EXPECT_CORUN_ERROR(serve::Model::load_npy(spec, dir_), Status::io_error, "bias_hh_l0.npy has shape [25], expected [24]");
}

TEST(ServeServer, BadRequestsAreErrors) {
  Engine engine(test_config());
  const serve::Model model = serve::Model::random(ModelSpec{Cell::lstm, 4, 6, 1, false}, 1);
  serve::ServeOptions opt;
  opt.calibrate = false;
  opt.use_cache = false;
  serve::Server server(engine, model, 2, 10, opt);
  std::vector<float> x(10 * 2 * 4);
  EXPECT_CORUN_ERROR(server.infer(x.data(), x.size() - 1, 10), Status::invalid_argument, "needs 80 floats");
  std::vector<float> longer(11 * 2 * 4);
  EXPECT_CORUN_ERROR(server.infer(longer, 11), Status::invalid_argument, "planned for 1 to 10");
  Plan too_wide;
  too_wide.workers = serve::starpu_cpu_workers() + 1;
  opt.forced_plan = &too_wide;
  EXPECT_CORUN_ERROR(serve::Server(engine, model, 2, 10, opt), Status::invalid_argument, "CPU workers");
  Plan wide_inline;
  wide_inline.workers = 2;
  wide_inline.xj = 2;
  wide_inline.mode = ExecMode::on_caller;
  opt.forced_plan = &wide_inline;
  EXPECT_CORUN_ERROR(serve::Server(engine, model, 2, 10, opt), Status::invalid_argument, "inline plan");
}

}  // namespace
}  // namespace corun::test
