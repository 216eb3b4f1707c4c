// Issue 52 item 5a: a simulated run never aborts inside StarPU. An op without a model at a width its policy may
// give it used to end the run in StarPU's SimGrid assertion ("Codelet corun_concat does not have a perfmodel",
// src/core/simgrid.c) with a backtrace; the engine now refuses the graph before its first task
// (engine/simulated_models.hpp) with corun::engine::UnmodelledOpsError naming the op, its footprint and shapes,
// and the widths it lacks. Two matmuls feed a concat; the matmuls have models at widths 1 and 2, the concat
// none. One process per policy (StarPU starts once per process): lws (single workers: width 1), corun (any
// width: 1-2) and pheft (StarPU's parallel policy, which asks the models itself).
#include "cli/simulate/history_file.hpp"
#include "codelets/op.hpp"
#include "codelets/starpu/codelets.hpp"
#include "engine/simulated_models.hpp"
#include "graphs/graph_impl.hpp"

#include "base/files.hpp"

#include <corun/engine.hpp>

#include <gtest/gtest.h>

#include <starpu.h>  // renames main to starpu_main: StarPU's own main runs it as the simulated application

#include <cstdio>
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

// Models at widths 1 and 2 for every matmul of the graph; nothing for the other ops.
void write_matmul_models(const detail::GraphImpl& g, const std::string& dir, const std::string& key) {
  cli::sim::HistoryModel m;
  for (const detail::Node& n : g.nodes) {
    if (n.call.kind != codelets::OpKind::matmul) continue;
    for (int w = 1; w <= 2; ++w) {
      cli::sim::HistoryEntry e;
      e.footprint = codelets::footprint(n.call);
      e.nsample = 12;  // above StarPU's calibration minimum of 10
      e.mean_us = 300.0 / w;
      m.by_width[w].push_back(e);
    }
  }
  const std::filesystem::path codelets = std::filesystem::path(dir) / "codelets" / "45";
  std::filesystem::create_directories(codelets);
  write_file_atomically((codelets / ("corun_matmul." + key)).string(), cli::sim::history_file_text(m));
}

class SimgridUnmodelled : public testing::TestWithParam<std::string> {};

TEST_P(SimgridUnmodelled, AnOpWithoutAModelIsRefusedBeforeAnyTask) {
  const std::string policy = GetParam();
  Graph g;
  const Tensor a = g.matmul(g.input("x0", {64, 32}), g.param("w0", {32, 16}), false, false, "mm0");
  const Tensor b = g.matmul(g.input("x1", {64, 48}), g.param("w1", {48, 16}), false, false, "mm1");
  g.concat({a, b}, 1, "cat");
  write_matmul_models(g.impl(), env_or_fail("STARPU_PERF_MODEL_DIR"), env_or_fail("STARPU_HOSTNAME"));
  const codelets::OpCall& concat = g.impl().nodes.back().call;
  ASSERT_EQ(concat.kind, codelets::OpKind::concat);
  char footprint[16];
  std::snprintf(footprint, sizeof footprint, "%08x", codelets::footprint(concat));

  Config conf;
  conf.policy = policy;
  conf.ncpus = 2;
  conf.quiet = true;
  conf.parallel_ops = false;  // the concat stays a task of its own
  Engine eng(conf);
  ASSERT_TRUE(eng.info().simulated);
  eng.set_tracing(true);
  std::string message;
  try {
    eng.run(g);
    ADD_FAILURE() << "the run went on without a model for the concat";
  } catch (const engine::UnmodelledOpsError& e) {
    message = e.what();
  }
  const std::string widths = policy == "lws" ? "no model at width 1 " : "no model at width 1-2 ";
  for (const std::string& want :
       {std::string("simulated run refused: 1 op footprint(s)"), "the " + policy + " policy",
        "concat (model corun_concat) footprint " + std::string(footprint) + ", shapes [64, 16] [64, 16] [64, 32]: " +
            widths + "(node 'cat')",
        std::string("natively first"), std::string("STARPU_CALIBRATE=1")})
    EXPECT_NE(message.find(want), std::string::npos) << "missing '" << want << "' in:\n" << message;
  EXPECT_EQ(message.find("matmul"), std::string::npos) << "the matmuls have models:\n" << message;
  EXPECT_TRUE(eng.trace().empty()) << "no task may run before the refusal";
  eng.release(g);
}

INSTANTIATE_TEST_SUITE_P(Policies, SimgridUnmodelled, testing::Values("lws", "corun", "pheft"),
                         [](const testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace corun

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
