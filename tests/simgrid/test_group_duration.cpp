// A group that the parallel-op pass forms in a simulated run has no history of its own (no native run ever
// ran that group at that width), and StarPU's SimGrid driver aborts on a task without a prediction. Its model
// there is what the pass assumes (codelets/starpu/codelets.cpp, group_cost): team member r runs the members
// split_range(members, r, width) one after another at width 1, and the group lasts as long as its slowest
// team member. Two independent matmuls of different shapes feed a concat on 2 cores under cpf 1x2
// ("sequential"); their width-1 models are 300 and 200 µs and width 2 barely helps (290 and 190), so the pass
// groups them and the group must sleep max(300, 200) = 300 µs, not abort.
#include "cli/simulate/history_file.hpp"
#include "codelets/op.hpp"
#include "codelets/starpu/codelets.hpp"
#include "graphs/graph_impl.hpp"

#include "base/files.hpp"

#include <corun/engine.hpp>
#include <corun/trace.hpp>

#include <gtest/gtest.h>

#include <starpu.h>  // renames main to starpu_main: StarPU's own main runs it as the simulated application

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

namespace corun {
namespace {

std::string env_or_fail(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') ADD_FAILURE() << name << " is not set (ctest sets it: tests/simgrid/CMakeLists.txt)";
  return v != nullptr ? v : "";
}

// Width-1 and width-2 µs of each node, in node order: the two matmuls, then the concat.
constexpr double kUs[3][2] = {{300, 290}, {200, 190}, {10, 10}};

void write_models(const detail::GraphImpl& g, const std::string& dir, const std::string& key) {
  ASSERT_EQ(g.nodes.size(), 3u);
  std::map<std::string, cli::sim::HistoryModel> files;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const codelets::OpCall& call = g.nodes[i].call;
    cli::sim::HistoryModel& m = files[std::string("corun_") + codelets::op_info(call.kind).name];
    for (int w = 1; w <= 2; ++w) {
      cli::sim::HistoryEntry e;
      e.footprint = codelets::footprint(call);
      e.nsample = 12;  // above StarPU's calibration minimum of 10
      e.mean_us = kUs[i][w - 1];
      m.by_width[w].push_back(e);
    }
  }
  const std::filesystem::path codelets = std::filesystem::path(dir) / "codelets" / "45";
  std::filesystem::create_directories(codelets);
  for (const auto& [symbol, model] : files)
    write_file_atomically((codelets / (symbol + "." + key)).string(), cli::sim::history_file_text(model));
}

TEST(SimgridGroup, GroupWithoutAModelTakesItsSlowestTeamMember) {
  Graph g;
  const Tensor a = g.matmul(g.input("x0", {64, 32}), g.param("w0", {32, 16}), false, false, "mm0");
  const Tensor b = g.matmul(g.input("x1", {64, 48}), g.param("w1", {48, 16}), false, false, "mm1");
  g.concat({a, b}, 1);
  write_models(g.impl(), env_or_fail("STARPU_PERF_MODEL_DIR"), env_or_fail("STARPU_HOSTNAME"));

  Config conf;
  conf.policy = "cpf";
  conf.executors = "1x2";
  conf.ncpus = 2;
  conf.quiet = true;
  conf.parallel_ops = true;
  conf.parallel_ops_auto = true;
  Engine eng(conf);
  ASSERT_TRUE(eng.info().simulated);
  eng.set_tracing(true);
  eng.run(g);
  const std::vector<TraceTask> trace = eng.trace();
  eng.release(g);

  int groups = 0;
  for (const TraceTask& t : trace) {
    if (t.op != "group") continue;
    ++groups;
    EXPECT_EQ(t.width, 2) << t.node;
    EXPECT_NEAR(t.end_us - t.start_us, 300.0, 3.0) << t.node << ": the slowest member's width-1 time";
    EXPECT_NEAR(t.predicted_us, 300.0, 0.5) << t.node;
  }
  EXPECT_EQ(groups, 1) << "the pass should group the two matmuls (290 + 190 separate vs 300 grouped)";
}

}  // namespace
}  // namespace corun

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
