// Dependencies derived from access modes, critical-path levels, width interpolation, executor layouts
// and profile files: the plain-C++ inputs of the cpf policy.
#include <corun/graph.hpp>

#include "common/error_matchers.hpp"
#include "common/temp_dir_test.hpp"
#include "base/json.hpp"
#include "graphs/passes/levels.hpp"
#include "sched/layout.hpp"
#include "sched/profiler/profile_file.hpp"
#include "sched/widthmodel/interpolate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

namespace corun {
namespace {

using Succ = std::vector<int32_t>;

TEST(Dependencies, FollowReadAfterWriteWriteAfterReadAndWriteAfterWrite) {
  Graph g;
  const Tensor a = g.input("a", {2, 2}), b = g.input("b", {2, 2});
  const Tensor c = g.add(a, b, "c");      // node 0 writes c
  const Tensor d = g.mul(c, b, "d");      // node 1 reads c (RAW on node 0)
  const Tensor e = g.sigmoid(c, "e");     // node 2 reads c (RAW on node 0)
  const Tensor f = g.add(d, e, "f");      // node 3 reads d, e
  (void)f;
  const auto deps = graphs::dependencies(g.impl());
  ASSERT_EQ(deps.successors.size(), 4u);
  EXPECT_EQ(deps.successors[0], (Succ{1, 2}));
  EXPECT_EQ(deps.successors[1], (Succ{3}));
  EXPECT_EQ(deps.successors[2], (Succ{3}));
  EXPECT_TRUE(deps.successors[3].empty());
  EXPECT_EQ(deps.predecessors[3], (Succ{1, 2}));
}

TEST(Dependencies, SgdUpdateWaitsForEveryReaderOfTheWeight) {
  Graph g;
  const Tensor x = g.input("x", {4, 3});
  const Tensor w = g.param("w", {3, 2});
  const Tensor t = g.input("t", {4, 2});
  const Tensor loss = g.softmax_xent(g.matmul(x, w, false, false, "mm"), t, "loss");
  g.backward(loss, {.sgd_update = true, .learning_rate = 0.1f});
  const auto& nodes = g.impl().nodes;
  const auto deps = graphs::dependencies(g.impl());
  int sgd = -1, mm = -1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].call.kind == codelets::OpKind::sgd) sgd = static_cast<int>(i);
    if (nodes[i].name == "mm") mm = static_cast<int>(i);
  }
  ASSERT_GE(sgd, 0);
  ASSERT_GE(mm, 0);
  // The forward matmul reads w; the update writes it: write-after-read.
  const auto& p = deps.predecessors[static_cast<size_t>(sgd)];
  EXPECT_NE(std::find(p.begin(), p.end(), mm), p.end());
}

graphs::Dependencies dag(std::vector<Succ> succ) {
  graphs::Dependencies d;
  d.successors = std::move(succ);
  d.predecessors.resize(d.successors.size());
  for (size_t i = 0; i < d.successors.size(); ++i)
    for (int32_t s : d.successors[i]) d.predecessors[static_cast<size_t>(s)].push_back(static_cast<int32_t>(i));
  return d;
}

TEST(Levels, LongestPredictedTimeToTheSink) {
  //   0 -> 1 -> 3
  //   0 -> 2 -> 3      times 1, 5, 2, 1
  const auto d = dag({{1, 2}, {3}, {3}, {}});
  const auto l = graphs::levels(d, {1, 5, 2, 1});
  EXPECT_EQ(l.level, (std::vector<double>{7, 6, 3, 1}));
  EXPECT_DOUBLE_EQ(l.critical_path, 7);
  EXPECT_DOUBLE_EQ(l.total, 9);
  EXPECT_EQ(l.critical, (std::vector<char>{1, 1, 0, 1}));
}

TEST(Levels, IndependentChainsAndUnknownTimes) {
  const auto d = dag({{1}, {}, {3}, {}});
  const auto l = graphs::levels(d, {2, 2, NAN, 10});
  EXPECT_EQ(l.level, (std::vector<double>{4, 2, 10, 10}));
  EXPECT_EQ(l.critical, (std::vector<char>{0, 0, 1, 1}));
  EXPECT_CORUN_ERROR(graphs::levels(d, {1, 2}), Status::invalid_argument, "2 times for 4 nodes");
}

TEST(WidthModel, InterpolatesBetweenMeasuredWidthsOnly) {
  std::vector<double> t{NAN, 100, NAN, 60, NAN, NAN, NAN, 20, NAN};
  sched::interpolate_widths(t);
  EXPECT_TRUE(std::isnan(t[0]));  // below the narrowest measured width: no guess
  EXPECT_DOUBLE_EQ(t[2], 80);
  EXPECT_DOUBLE_EQ(t[4], 50);
  EXPECT_DOUBLE_EQ(t[6], 30);
  EXPECT_TRUE(std::isnan(t[8]));  // above the widest: no guess
  EXPECT_DOUBLE_EQ(sched::nearest_measured({NAN, 100, NAN, 60}, 1), 100);
  EXPECT_DOUBLE_EQ(sched::nearest_measured({NAN, 100, NAN, 60}, 3), 100);  // tie: the narrower
  EXPECT_TRUE(std::isnan(sched::nearest_measured({NAN, NAN}, 1)));
}

TEST(ExecutorLayout, ParsesNxKStrictly) {
  EXPECT_EQ(sched::parse_layout("2x4", "X"), (sched::ExecutorLayout{2, 4}));
  for (const char* bad : {"", "2", "x4", "2x", "0x1", "2x0", "ax1", "2x1x", "-1x2", "2 x1"}) {
    SCOPED_TRACE(bad);
    EXPECT_CORUN_ERROR(sched::parse_layout(bad, "CORUN_EXECUTORS"), Status::invalid_config, "CORUN_EXECUTORS");
  }
}

class ProfileFile : public corun::testing::TempDirTest {
 protected:
  ProfileFile() : TempDirTest("profile") {}
};

TEST_F(ProfileFile, RoundTrips) {
  sched::Profile p;
  p.machine_key = "corun-abc";
  p.cpu = "Some CPU";
  p.workers = 8;
  p.model = "lstm";
  p.size = "small";
  p.layout = {4, 2};
  p.tried = {{{8, 1}, 12.5, 11.0, 15}, {{4, 2}, 10.25, 9.5, 15}};
  const std::string file = path("p.txt");
  sched::write_profile(file, p);
  const sched::Profile q = sched::read_profile(file);
  EXPECT_EQ(q.machine_key, p.machine_key);
  EXPECT_EQ(q.cpu, p.cpu);
  EXPECT_EQ(q.workers, 8);
  EXPECT_EQ(q.layout, p.layout);
  ASSERT_EQ(q.tried.size(), 2u);
  EXPECT_EQ(q.tried[1].layout, (sched::ExecutorLayout{4, 2}));
  EXPECT_DOUBLE_EQ(q.tried[1].median_ms, 10.25);
  EXPECT_EQ(q.tried[1].runs, 15);
}

TEST_F(ProfileFile, IsJson) {
  sched::Profile p;
  p.machine_key = "corun-abc";
  p.workers = 2;
  p.layout = {2, 1};
  p.tried = {{{2, 1}, 40.5, 39.0, 5}};
  sched::write_profile(path("p.json"), p);
  const corun::json::Value doc = corun::json::parse_file(path("p.json"));
  EXPECT_EQ(doc.at("format"), "corun-profile");
  EXPECT_EQ(doc.at("version"), 1);
  EXPECT_EQ(doc.at("layout"), "2x1");
  EXPECT_EQ(doc.at("tried").at(0).at("median_ms"), 40.5);
}

// A profile in the text format of earlier versions is read, with a warning that says so.
TEST_F(ProfileFile, OldTextFormatIsReadWithAWarning) {
  std::ofstream(path("old.txt")) << "# corun profile v1\nmachine_key=corun-abc\ncpu=Some CPU\nworkers=8\nmodel=lstm\n"
                                    "size=small\nlayout=4x2\nconfig=8x1 median_ms=12.5 min_ms=11 runs=15\n"
                                    "config=4x2 median_ms=10.25 min_ms=9.5 runs=15\n";
  ::testing::internal::CaptureStderr();
  const sched::Profile q = sched::read_profile(path("old.txt"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("warning: read the profile '" + path("old.txt") + "' in the old text format"), std::string::npos)
      << err;
  EXPECT_NE(err.find("the next time it is written, it will be JSON"), std::string::npos) << err;
  EXPECT_EQ(q.machine_key, "corun-abc");
  EXPECT_EQ(q.workers, 8);
  EXPECT_EQ(q.layout, (sched::ExecutorLayout{4, 2}));
  ASSERT_EQ(q.tried.size(), 2u);
  EXPECT_DOUBLE_EQ(q.tried[1].median_ms, 10.25);
}

TEST_F(ProfileFile, MalformedJsonIsAClearError) {
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    return path(name);
  };
  EXPECT_CORUN_ERROR(sched::read_profile(write("a", "{\"format\": \"corun-profile\", \"version\": 1,\n]")),
                     Status::invalid_config, "'" + path("a") + "': invalid JSON at line 2, column 1",
                     "regenerate it with `corun profile`");
  EXPECT_CORUN_ERROR(sched::read_profile(write("b", R"({"format": "corun-trace", "version": 1})")),
                     Status::invalid_config, "is not a corun profile");
  EXPECT_CORUN_ERROR(sched::read_profile(write("c", R"({"format": "corun-profile", "version": 7})")),
                     Status::invalid_config, "format version 7; this corun reads version 1");
  EXPECT_CORUN_ERROR(sched::read_profile(write("d", R"({"format": "corun-profile", "version": 1, "machine_key": "k"})")),
                     Status::invalid_config, "profile '" + path("d") + "' has no 'cpu'");
  const std::string full = R"({"format": "corun-profile", "version": 1, "machine_key": "k", "cpu": "c",
      "workers": 2, "model": "lstm", "size": "small", "layout": "2x1", "tried": [{"layout": "2x1",
      "median_ms": "fast", "min_ms": 1, "runs": 5}]})";
  EXPECT_CORUN_ERROR(sched::read_profile(write("e", full)), Status::invalid_config,
                     "profile '" + path("e") + "': tried[0].median_ms must be a number, not a string");
  EXPECT_CORUN_ERROR(sched::read_profile(write("f", R"({"format": "corun-profile", "format": "x"})")),
                     Status::invalid_config, "duplicate member name \"format\"");
  // A measured time that is negative (or nan, written as null) would make the layout choice arbitrary.
  std::string negative = full;
  negative.replace(negative.find("\"fast\""), 6, "-2.5");
  EXPECT_CORUN_ERROR(sched::read_profile(write("g", negative)), Status::invalid_config,
                     "tried[0].median_ms must be a finite, non-negative time in milliseconds, not -2.5");
  EXPECT_CORUN_ERROR(sched::read_profile(write("h", "# corun profile v1\nlayout=2x1\nconfig=2x1 median_ms=nan "
                                                    "min_ms=1 runs=5\n")),
                     Status::invalid_config, "median_ms is not a finite, non-negative number");
}

TEST_F(ProfileFile, BadFilesAreClearErrors) {
  EXPECT_CORUN_ERROR(sched::read_profile(path("missing.txt")), Status::io_error, "corun profile");
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(path(name)) << text;
    return path(name);
  };
  EXPECT_CORUN_ERROR(sched::read_profile(write("a", "hello\n")), Status::invalid_config, "not a corun profile");
  EXPECT_CORUN_ERROR(sched::read_profile(write("b", "# corun profile v1\nworkers=2\n")), Status::invalid_config,
                     "no layout= line");
  EXPECT_CORUN_ERROR(sched::read_profile(write("c", "# corun profile v1\nlayout=2y1\n")), Status::invalid_config,
                     "not an executor layout");
  EXPECT_CORUN_ERROR(sched::read_profile(write("d", "# corun profile v1\nlayout=2x1\ncolor=red\n")),
                     Status::invalid_config, "line 3: unknown key 'color'");
  EXPECT_CORUN_ERROR(sched::read_profile(write("e", "# corun profile v1\nlayout=2x1\nconfig=2x1 median_ms=abc\n")),
                     Status::invalid_config, "line 3");
  EXPECT_CORUN_ERROR(sched::read_profile(write("f", "")), Status::invalid_config, "empty file");
}

TEST_F(ProfileFile, UnwritablePathIsAnIoError) {
  sched::Profile p;
  p.layout = {1, 1};
  EXPECT_CORUN_ERROR(sched::write_profile(path("no/such/dir/p.txt"), p), Status::io_error, "p.txt");
}

}  // namespace
}  // namespace corun
