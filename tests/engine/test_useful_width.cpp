// The engine caps every task's width at its call's work items (codelets/work_items.hpp): a convolution at batch 1
// on im2col is one image, so no policy gives it a team, even when asked for every task at width 2.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace corun {
namespace {

TEST(UsefulWidth, NoPolicyGivesAnOpMoreCoresThanItHasWorkItems) {
  for (const std::string policy : {"cpf", "corun"}) {
    SCOPED_TRACE(policy);
    Graph g;
    std::mt19937_64 rng(3);
    const Tensor x = g.input("x", {1, 8, 8, 8});
    const Tensor w = g.param("w", {8, 8, 3, 3});
    const Tensor m = g.param("m", {64, 64});
    for (Tensor t : {x, w, m}) test::fill_uniform(g, t, rng);
    Conv2dOptions o;
    o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
    const Tensor y = g.conv2d(x, w, Tensor(), o, "conv");  // one image on im2col: one work item
    const Tensor out = g.matmul(g.reshape(y, {8, 64}), m, false, false, "mm");  // 8 rows of 64: tiles of 32
    g.keep(out);
    test::choose_conv_kernel(g, codelets::ConvKernel::im2col);
    Config c = test::test_config(policy);
    c.fixed_width = 2;  // every task at width 2 where it can use it
    if (policy == "cpf") c.executors = "1x2";
    Engine eng(c);
    if (eng.info().workers < 2) GTEST_SKIP() << "one worker";
    eng.set_tracing(true);
    eng.run(g);
    for (const TraceTask& t : eng.trace()) {
      if (t.node == "conv") {
        EXPECT_EQ(t.width, 1) << "the batch-1 im2col convolution got a team";
      }
      if (t.node == "mm") {
        EXPECT_EQ(t.width, 2) << "the product (2 tiles) should take the width asked for";
      }
    }
    eng.release(g);
  }
}

}  // namespace
}  // namespace corun
