// The plain-C++ planning parts of the serving runtime: PCP's traffic formula and chooser (DeepCPU 5.2.3),
// the phased-schedule enumeration with its three pruning rules and MM fusion (5.1, 5.2.1), plan files.
#include "serve/kernels/pcp.hpp"
#include "serve/kernels/plan_file.hpp"
#include "serve/kernels/schedules.hpp"

#include "base/json.hpp"
#include "common/error_matchers.hpp"

#include <corun/error.hpp>

#include <gtest/gtest.h>

#include <bit>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

namespace corun::serve {
namespace {

constexpr int64_t KiB = 1024, MiB = 1024 * 1024;

TEST(ServePcp, TheoremFormulaWhenWeightsDoNotFitL2) {
  // C[20, 4096] = A[20, 1024] B[1024, 4096] (LSTM H=1024, batch 20): |B| = 16 MiB, never fits a 1 MiB L2
  // in 2 blocks: every step pays Xj|A| + Xi|B| + 2 Xk|C|.
  const MatmulShape mm{20, 4096, 1024};
  const double a = 20 * 1024 * 4, b = 1024 * 4096 * 4, c = 20 * 4096 * 4;
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 1, 2, 1, 1, MiB), 2 * a + b + 2 * c);
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 2, 1, 1, 1, MiB), a + 2 * b + 2 * c);
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 1, 1, 2, 1, MiB), a + b + 4 * c);
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 1, 2, 1, 100, MiB), 100 * (2 * a + b + 2 * c));
}

TEST(ServePcp, WeightsThatFitAreReadOnceForTheWholeSequence) {
  // LSTM H=256 batch 1: |B| = 1 MiB; with Xj = 2 each core's half (512 KiB) fits its 1 MiB L2.
  const MatmulShape mm{1, 1024, 256};
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 1, 2, 1, 100, MiB), 100 * (2 * 1024.0 + 2 * 4096.0) + 1 * MiB);
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 1, 1, 2, 100, MiB), 100 * (1024.0 + 4 * 4096.0) + 1 * MiB);
  // One block of 1 MiB still fits (<=), a 512 KiB L2 does not: then B is read every step.
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 1, 1, 1, 100, MiB), 100 * (1024.0 + 2 * 4096.0) + MiB);
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 1, 1, 1, 100, 512 * KiB), 100 * (1024.0 + MiB + 2 * 4096.0));
}

TEST(ServePcp, ChooserPrefersColumnBlocksAtBatchOne) {
  const MatmulShape mm{1, 1024, 256};
  const Partition p = choose_partition(mm, 2, 100, MiB, 256, /*allow_k=*/true);
  EXPECT_EQ(p.xi, 1);
  EXPECT_EQ(p.xj, 2);  // 2072576 bytes against 2789376 for the K split
  EXPECT_EQ(p.xk, 1);
  EXPECT_TRUE(p.weights_fit_l2);
  EXPECT_DOUBLE_EQ(p.traffic_bytes, 2072576.0);
}

TEST(ServePcp, ChooserSplitsTheBatchWhenActivationsDominate) {
  // I=64, K=64, J=256: |A| = 16 KiB, |B| = 64 KiB, |C| = 64 KiB; every block of B fits, so Xi costs one
  // extra read of B per block while Xj re-reads A every step: (4,1,1) = 15007744 < (2,2,1) = 16515072
  // < (1,4,1) = 19726336.
  const MatmulShape mm{64, 256, 64};
  const Partition p = choose_partition(mm, 4, 100, MiB, 64);
  EXPECT_EQ(p.xi, 4);
  EXPECT_EQ(p.xj, 1);
  EXPECT_DOUBLE_EQ(p.traffic_bytes, 15007744.0);
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 2, 2, 1, 100, MiB), 16515072.0);
  EXPECT_DOUBLE_EQ(pcp_traffic(mm, 1, 4, 1, 100, MiB), 19726336.0);
}

TEST(ServePcp, ChooserSplitsColumnsUntilTheWeightBlocksFitL2) {
  // 16 MiB of weights over 16 cores of 1 MiB: only Xj Xk = 16 makes the blocks fit.
  const MatmulShape mm{20, 4096, 1024};
  const Partition p = choose_partition(mm, 16, 100, MiB, 1024);
  EXPECT_EQ(p.xj, 16);
  EXPECT_TRUE(p.weights_fit_l2);
}

TEST(ServePcp, NeverSplitsKUnlessAllowedAndRejectsImpossibleParallelism) {
  const MatmulShape mm{1, 8, 8};
  for (const Partition& f : factorisations(4, 1, 8, 1)) EXPECT_EQ(f.xk, 1);
  EXPECT_EQ(factorisations(4, 4, 4, 4).size(), 6u);  // ordered triples with product 4
  EXPECT_THROW(choose_partition(mm, 0, 1, MiB, 8), Error);
  EXPECT_THROW(choose_partition(mm, 4, 1, MiB, 2), Error);  // batch 1, at most 2 column blocks, no K split
}

TEST(ServeSchedules, LstmHasSixteenPhasedSchedulesInFiveShapeClasses) {
  ScheduleCounts n;
  const std::vector<PhasedSchedule> all = enumerate_schedules(StepDag::independent(4), &n);
  EXPECT_EQ(n.ordered_partitions, 545835);  // Fubini number of 8 MMs
  EXPECT_EQ(n.valid, 545835);               // no MM of a step depends on another
  EXPECT_LT(n.rule_ii, n.valid);            // consecutive same-type phases without an edge are merged
  EXPECT_GT(n.rule_ii, n.rule_iii);         // e.g. {h:*, x:i}{x:f,g,o} passes (ii), fails (iii)
  EXPECT_EQ(n.rule_iii, 16);                // time-independent first: one per hoisted subset
  ASSERT_EQ(all.size(), 16u);               // DeepCPU: "for LSTMs, Q < 20"
  uint32_t seen = 0;
  for (const PhasedSchedule& s : all) {
    const uint32_t h = s.hoisted_gates(4);
    EXPECT_FALSE(seen & (1u << h)) << "duplicate schedule " << s.str("ifgo");
    seen |= 1u << h;
    EXPECT_EQ(s.time_independent, h != 0 ? 1 : 0);
  }
  const std::vector<PhasedSchedule> classes = distinct_by_shape(all, 4);
  ASSERT_EQ(classes.size(), 5u);  // 0..4 hoisted gates
  EXPECT_EQ(classes.front().hoisted_gates(4), 0xFu);
}

TEST(ServeSchedules, PaperSchedulesOneAndTwoAndTheirFusion) {
  const std::vector<PhasedSchedule> all = enumerate_schedules(StepDag::independent(4));
  const PhasedSchedule* s1 = nullptr;
  const PhasedSchedule* s2 = nullptr;
  for (const PhasedSchedule& s : all) {
    if (s.hoisted_gates(4) == 0) s1 = &s;
    if (s.hoisted_gates(4) == 0xF) s2 = &s;
  }
  ASSERT_NE(s1, nullptr);
  ASSERT_NE(s2, nullptr);
  // Schedule 1: all eight MMs of step t in phase t, fused into two GEMMs (x_t and h_{t-1}) in parallel.
  ASSERT_EQ(s1->phases.size(), 1u);
  const std::vector<FusedMM> f1 = s1->fused(0, 4);
  ASSERT_EQ(f1.size(), 2u);
  EXPECT_EQ(f1[0].gates, 0xFu);
  EXPECT_EQ(f1[1].gates, 0xFu);
  EXPECT_EQ(s1->str("ifgo"), "{x:i,f,g,o h:i,f,g,o}");
  // Schedule 2: the input MMs of every step first (one fused GEMM), then one fused recurrent GEMM per step.
  EXPECT_EQ(s2->str("ifgo"), "T{x:i,f,g,o}{h:i,f,g,o}");
  ASSERT_EQ(s2->fused(1, 4).size(), 1u);
  EXPECT_TRUE(s2->fused(1, 4)[0].recurrent);
}

TEST(ServeSchedules, GruAndDependenciesInsideAStep) {
  ScheduleCounts n;
  EXPECT_EQ(enumerate_schedules(StepDag::independent(3), &n).size(), 8u);
  EXPECT_EQ(n.ordered_partitions, 4683);
  EXPECT_EQ(distinct_by_shape(enumerate_schedules(StepDag::independent(3)), 3).size(), 4u);
  // One gate whose recurrent MM needs its input MM: only {x}{h} respects the edge; rule (ii) keeps it
  // (different types), rule (iii) keeps it (x first) and it becomes the hoisted schedule.
  StepDag d = StepDag::independent(1);
  d.deps[1] = 1u;
  const std::vector<PhasedSchedule> s = enumerate_schedules(d, &n);
  EXPECT_EQ(n.ordered_partitions, 3);
  EXPECT_EQ(n.valid, 1);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].str("x"), "T{x:x}{h:x}");
}

TEST(ServePlanFile, RoundTripKeyMismatchAndMalformedFiles) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("corun-serve-plan-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ModelSpec spec{Cell::gru, 64, 32, 2, true};
  const std::string key = plan_key(spec, 4, 10, 2, "corun-test");
  const std::string path = plan_path(dir.string(), key);
  Plan p;
  p.hoisted_gates = 5;
  p.workers = 2;
  p.direction_groups = 2;
  p.xi = 1;
  p.xj = 1;
  p.mode = ExecMode::per_step;
  p.calibrated_ms = 1.5;
  save_plan(path, key, p);
  const std::optional<Plan> q = load_plan(path, key, Cell::gru);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->str(Cell::gru), p.str(Cell::gru));
  EXPECT_EQ(q->str(Cell::gru), "schedule=hoist{r,n} workers=2 groups=2 pcp=1x1x1 mode=per-step gemm=auto");
  // The two request paths without a task per request round-trip under their printed names.
  for (ExecMode m : {ExecMode::on_caller, ExecMode::resident}) {
    Plan r = p;
    r.mode = m;
    save_plan(path, key, r);
    const std::optional<Plan> back = load_plan(path, key, Cell::gru);
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->mode, m);
    EXPECT_TRUE(back->str(Cell::gru).find(std::string("mode=") + exec_mode_name(m)) != std::string::npos);
  }
  ExecMode parsed = ExecMode::wcs;
  EXPECT_TRUE(parse_exec_mode("inline", &parsed));
  EXPECT_EQ(parsed, ExecMode::on_caller);
  EXPECT_FALSE(parse_exec_mode("threads", &parsed));
  save_plan(path, key, p);
  EXPECT_FALSE(load_plan(path, key + "x", Cell::gru).has_value());         // another model: ignored
  EXPECT_FALSE(load_plan(path + ".missing", key, Cell::gru).has_value());  // no file: plan anew
  {
    std::ofstream f(path, std::ios::app);
    f << "xj lots\n";
  }
  EXPECT_THROW(load_plan(path, key, Cell::gru), Error);
  std::filesystem::remove_all(dir);
}

TEST(ServePlanFile, IsJsonAndReadsTheOldTextFormatWithAWarning) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("corun-serve-plan-old-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string key = plan_key(ModelSpec{Cell::lstm, 16, 16, 1, false}, 1, 10, 2, "corun-test");
  const std::string path = plan_path(dir.string(), key);
  Plan p;
  p.hoisted_gates = 15;
  p.workers = 2;
  p.xj = 2;
  p.calibrated_ms = 1.25;
  save_plan(path, key, p);
  const json::Value doc = json::parse_file(path);
  EXPECT_EQ(doc.at("format"), "corun-serve-plan");
  EXPECT_EQ(doc.at("key"), key);
  EXPECT_EQ(doc.at("mode"), "wcs");
  EXPECT_EQ(doc.at("calibrated_ms"), 1.25);

  // The text format of earlier versions.
  std::ofstream(path) << "# corun serve plan (docs/serving.md)\nkey " << key
                      << "\nhoisted_gates 15\nworkers 2\ndirection_groups 1\nxi 1\nxj 2\nmode per-step\n"
                         "calibrated_ms 1.25\n";
  ::testing::internal::CaptureStderr();
  const std::optional<Plan> old = load_plan(path, key, Cell::lstm);
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(old.has_value());
  // It ran OpenBLAS for the step products, and says so.
  EXPECT_EQ(old->str(Cell::lstm), "schedule=hoist{i,f,g,o} workers=2 groups=1 pcp=1x2x1 mode=per-step gemm=openblas");
  EXPECT_NE(err.find("warning: read the serving plan " + path + " in the old text format"), std::string::npos) << err;
  EXPECT_NE(err.find("it will be JSON"), std::string::npos) << err;
  std::ofstream(path, std::ios::app) << "xj lots\n";
  EXPECT_CORUN_ERROR(load_plan(path, key, Cell::lstm), Status::io_error, "line 10: xj 'lots' is not an integer");

  // Malformed JSON plans: the file, the position or the member, and what to do.
  auto bad = [&](const std::string& text) {
    std::ofstream(path) << text;
    return corun::testing::error_message([&] { load_plan(path, key, Cell::lstm); }, Status::io_error);
  };
  const std::string head = R"({"format": "corun-serve-plan", "version": 1, "key": ")" + key + "\"";
  corun::testing::expect_contains(bad(head + ", }"), {path, "invalid JSON at line 1", "unexpected '}'", "re-plan"});
  corun::testing::expect_contains(bad(head + "}"), {path, "has no 'hoisted_gates'", "delete the file to re-plan"});
  corun::testing::expect_contains(
      bad(head + R"(, "hoisted_gates": 99, "workers": 2, "direction_groups": 1, "xi": 1, "xj": 1,
          "mode": "wcs", "calibrated_ms": 1})"),
      {"hoisted_gates must be an integer in [0, 15], not 99"});
  corun::testing::expect_contains(bad(R"({"format": "corun-trace"})"), {"is not a corun serving plan"});
  const std::string fields = R"(, "hoisted_gates": 15, "workers": 2, "direction_groups": 1, "xi": 1, "xj": 2,
      "mode": "wcs", "calibrated_ms": 1)";
  corun::testing::expect_contains(bad(head + fields + R"(, "step_gemm": "mkl"})"),
                                  {path, "step_gemm 'mkl' is not auto, openblas or libxsmm", "re-plan"});

  // The step kernel round-trips; a JSON plan from before it was a field ran OpenBLAS.
  p.step_gemm = StepGemmKernel::libxsmm;
  save_plan(path, key, p);
  EXPECT_EQ(json::parse_file(path).at("step_gemm"), "libxsmm");
  EXPECT_EQ(load_plan(path, key, Cell::lstm)->step_gemm, StepGemmKernel::libxsmm);
  std::ofstream(path) << head << fields << "}";
  EXPECT_EQ(load_plan(path, key, Cell::lstm)->step_gemm, StepGemmKernel::openblas);
  std::filesystem::remove_all(dir);
}

TEST(ServePlanFile, NonFiniteTimesAndNonRegularFilesAreErrors) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("corun-serve-plan-nan-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string key = plan_key(ModelSpec{Cell::lstm, 16, 16, 1, false}, 1, 10, 2, "corun-test");
  const std::string path = plan_path(dir.string(), key);
  auto bad = [&](const std::string& text) {
    std::ofstream(path) << text;
    return corun::testing::error_message([&] { load_plan(path, key, Cell::lstm); }, Status::io_error);
  };
  const std::string text = "# corun serve plan\nkey " + key + "\nhoisted_gates 15\nworkers 2\ndirection_groups 1\nxi 1\nxj 2\nmode wcs\n";
  corun::testing::expect_contains(bad(text + "calibrated_ms nan\n"),
                                  {path, "line 9: calibrated_ms 'nan' is not a finite number", "re-plan"});
  corun::testing::expect_contains(bad(text + "calibrated_ms 12abc\n"), {"calibrated_ms '12abc'"});
  const std::string head = R"({"format": "corun-serve-plan", "version": 1, "key": ")" + key +
                           R"(", "hoisted_gates": 15, "workers": 2, "direction_groups": 1, "xi": 1, "xj": 1, "mode": "wcs", )";
  corun::testing::expect_contains(bad(head + R"("calibrated_ms": -1})"), {"calibrated_ms -1 is not a finite, non-negative"});
  // nan written by a JSON library is null: not a number.
  corun::testing::expect_contains(bad(head + R"("calibrated_ms": null})"), {"calibrated_ms", "number"});
  // A FIFO where the plan should be: refused at once, never waited on.
  std::filesystem::remove(path);
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  ::alarm(20);
  const std::string fifo = corun::testing::error_message([&] { load_plan(path, key, Cell::lstm); }, Status::io_error);
  ::alarm(0);
  EXPECT_NE(fifo.find("is a FIFO, not a regular file"), std::string::npos) << fifo;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace corun::serve
