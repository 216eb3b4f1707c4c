// Weights that change only through Engine::write (codelets/stable_buffers.hpp): the oneDNN convolutions keep
// their filters' reorder across runs, shared by every worker, and make it anew after a write. Two
// convolutions of the same shape share one cached primitive, so each must still read its own weights; a
// write must reach the next run; a training graph (whose weights change every step) registers nothing.
// The reference is the inline runner on a copy of the graph, which keeps nothing across runs and gives the
// Engine's bits (corun/inline.hpp).
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>
#include <corun/inline.hpp>

#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/stable_buffers.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <vector>

namespace corun {
namespace {

struct Net {
  Tensor x, w1, w2, w3, out;
};

// x -> conv(w1) -> relu -> conv(w2) -> relu -> conv(w3): w2 and w3 have the same shape (one primitive).
Net build(Graph& g) {
  std::mt19937_64 rng(5);
  Net n;
  n.x = g.input("x", {1, 32, 8, 8});
  n.w1 = g.param("w1", {32, 32, 3, 3});
  n.w2 = g.param("w2", {32, 32, 3, 3});
  n.w3 = g.param("w3", {32, 32, 3, 3});
  for (Tensor t : {n.x, n.w1, n.w2, n.w3}) test::fill_uniform(g, t, rng, -0.5f, 0.5f);
  Conv2dOptions pad;
  pad.pad_top = pad.pad_left = pad.pad_bottom = pad.pad_right = 1;
  const Tensor a = g.relu(g.conv2d(n.x, n.w1, Tensor(), pad, "c1"), "a");
  const Tensor b = g.relu(g.conv2d(a, n.w2, Tensor(), pad, "c2"), "b");
  n.out = g.conv2d(b, n.w3, Tensor(), pad, "out");
  g.keep(n.out);
  return n;
}

std::vector<float> inline_run(Graph& g, const Net& n) {
  InlineRunner run(g);
  run.run();
  const float* y = g.data(n.out);
  return std::vector<float>(y, y + n.out.shape().numel());
}

TEST(StableWeights, ReorderedOnceFollowEveryWriteAndStayPerTensor) {
  if (codelets::dnnl_channel_block() == 0) GTEST_SKIP() << "no oneDNN blocked convolution kernels on this CPU";
  // The engine and the inline runner both read the choice; dnnl for every convolution, whatever the shapes.
  ::setenv("CORUN_CONV_KERNEL", "dnnl", 1);
  Config config = test::test_config();
  config.conv_kernel = "dnnl";
  Engine engine(config);
  Graph g, ref;
  const Net n = build(g), r = build(ref);
  std::vector<float> want = inline_run(ref, r);
  const float* w2_host = g.data(n.w2);  // Graph::data refuses once the graph is bound; the address stays
  for (int run = 0; run < 3; ++run) {
    engine.run(g);
    EXPECT_EQ(engine.read(g, n.out), want) << "run " << run;
  }
  // The weights are registered as written only through the engine; a write stamps them anew.
  const codelets::BufferStamp before = codelets::stable_buffer_stamp(w2_host);
  EXPECT_TRUE(before.valid());
  std::mt19937_64 rng(9);
  const std::vector<float> w2 = test::uniform(rng, n.w2.shape().numel(), -0.5f, 0.5f);
  engine.write(g, n.w2, w2);
  EXPECT_NE(codelets::stable_buffer_stamp(w2_host), before);
  std::copy(w2.begin(), w2.end(), ref.data(r.w2));
  const std::vector<float> changed = inline_run(ref, r);
  ASSERT_NE(changed, want);  // else the test could not see a stale reorder
  for (int run = 0; run < 2; ++run) {
    engine.run(g);
    EXPECT_EQ(engine.read(g, n.out), changed) << "run " << run << " after the write";
  }
  // Released, the buffers are no longer registered: nothing derived from them can be found again.
  engine.release(g);
  EXPECT_FALSE(codelets::stable_buffer_stamp(w2_host).valid());
  ::unsetenv("CORUN_CONV_KERNEL");
}

TEST(StableWeights, TrainingGraphsAreNotRegistered) {
  Engine engine(test::test_config());
  Graph g;
  const Tensor x = g.input("x", {4, 8});
  const Tensor w = g.param("w", {8, 2});
  std::mt19937_64 rng(3);
  test::fill_uniform(g, x, rng);
  test::fill_uniform(g, w, rng);
  const float *x_host = g.data(x), *w_host = g.data(w);
  const Tensor y = g.matmul(x, w, false, false, "y");
  const Tensor loss = g.reduce_sum(g.mul(y, y, "sq"), 1.0f, "loss");
  BackwardOptions opts;
  opts.learning_rate = 0.1f;
  g.backward(loss, opts);
  engine.run(g);
  // A training graph: its parameters change every step (its update nodes here; run_replicated's own update
  // tasks or the cross-rank reduction elsewhere), so nothing of it is registered.
  EXPECT_FALSE(codelets::stable_buffer_stamp(w_host).valid());
  EXPECT_FALSE(codelets::stable_buffer_stamp(x_host).valid());
  engine.release(g);
}

TEST(StableBuffers, DerivedObjectsLiveUntilTheNextWrite) {
  std::vector<float> buf(4, 1.0f);
  const float* p = buf.data();
  int made = 0;
  auto make = [&] {
    ++made;
    return std::make_shared<int>(made);
  };
  EXPECT_EQ(codelets::stable_buffer_derived(p, "k", make), nullptr);  // not registered: nothing made
  EXPECT_EQ(made, 0);
  codelets::register_stable_buffer(p);
  const codelets::BufferStamp s0 = codelets::stable_buffer_stamp(p);
  auto a = codelets::stable_buffer_derived(p, "k", make);
  auto b = codelets::stable_buffer_derived(p, "k", make);
  EXPECT_EQ(a, b);
  EXPECT_EQ(made, 1);
  codelets::stable_buffer_derived(p, "other key", make);
  EXPECT_EQ(made, 2);
  codelets::stamp_stable_buffer(p);
  EXPECT_NE(codelets::stable_buffer_stamp(p), s0);
  EXPECT_NE(codelets::stable_buffer_derived(p, "k", make), a);  // made anew after the write
  EXPECT_EQ(made, 3);
  EXPECT_EQ(*std::static_pointer_cast<int>(a), 1);  // the caller's copy outlives the registry's
  codelets::register_stable_buffer(p);  // again: a new id
  EXPECT_NE(codelets::stable_buffer_stamp(p).id, s0.id);
  codelets::unregister_stable_buffer(p);
  EXPECT_FALSE(codelets::stable_buffer_stamp(p).valid());
  EXPECT_EQ(codelets::stable_buffer_derived(p, "k", make), nullptr);
}

}  // namespace
}  // namespace corun
