// NUMA replicas with SGD momentum (docs/numa.md; NUMA-Caffe's Theorem 4.1): CIFAR-quick over N replicas of
// batch B / N gives the one solver's update over batch B, the root keeping the velocities (checked after the
// second step, when the velocity carries the first step's gradient), N = 1 bitwise; and the root's
// velocities are what one solver's backward would create, so checkpoints save the same state.
#include "engine_test_util.hpp"

#include <corun/models/cnn.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

namespace corun::test {
namespace {

constexpr int kBatch = 8;
constexpr int kSteps = 2;

models::CnnConfig cifar_quick(int batch, bool sgd_update) {
  models::CnnConfig c = models::cifar_quick_config();
  c.batch = batch;
  c.sgd_update = sgd_update;
  c.learning_rate = 0.05f;  // large enough that the steps move the weights visibly
  return c;
}

struct Trained {
  std::vector<std::vector<float>> params, velocities;  // root's (replica 0's), in graph order
  std::vector<std::vector<std::vector<float>>> replica_params;
};

// `steps` steps over the same synthetic batches: one solver (n = 0) or n replicas of batch / n rows each.
Trained train(int n, int steps) {
  ScopedEnv replicas("CORUN_REPLICAS", n > 0 ? std::to_string(n).c_str() : nullptr);
  ScopedEnv no_numa("CORUN_NUMA", nullptr);
  const int count = std::max(n, 1);
  const models::CnnConfig whole = cifar_quick(kBatch, n == 0);
  std::vector<std::unique_ptr<models::Cnn>> models;  // before the engine: it lets go of the graphs first
  for (int r = 0; r < count; ++r) {
    models.push_back(std::make_unique<models::Cnn>(cifar_quick(kBatch / count, n == 0)));
    models.back()->init_params();
  }
  Engine eng(test_config("eager"));
  EXPECT_EQ(eng.info().replicas, count);
  const models::SyntheticImages data(whole);
  std::vector<float> images, targets;
  std::vector<Graph*> graphs;
  for (auto& m : models) graphs.push_back(&m->graph);
  for (int it = 0; it < steps; ++it) {
    data.make_batch(static_cast<uint64_t>(it), images, targets);
    for (int r = 0; r < count; ++r) {  // replica r: rows [r B / n, (r + 1) B / n) of the batch
      models::Cnn& m = *models[static_cast<size_t>(r)];
      const size_t xs = static_cast<size_t>(m.x.shape().numel()), ts = static_cast<size_t>(m.targets.shape().numel());
      eng.write(m.graph, m.x, images.data() + r * xs, xs);
      eng.write(m.graph, m.targets, targets.data() + r * ts, ts);
    }
    if (n == 0) {
      eng.run(models[0]->graph);
    } else {
      eng.run_replicated(graphs, whole.learning_rate, whole.momentum);
    }
  }
  Trained out;
  Graph& root = models[0]->graph;
  for (Tensor p : root.params()) out.params.push_back(eng.read(root, p));
  for (Tensor v : root.optimizer_state()) out.velocities.push_back(eng.read(root, v));
  for (auto& m : models) {
    out.replica_params.emplace_back();
    for (Tensor p : m->graph.params()) out.replica_params.back().push_back(eng.read(m->graph, p));
  }
  for (auto& m : models) eng.release(m->graph);
  return out;
}

// max |a - b| over every tensor, relative to max |b| over every tensor: the error of the model's weights.
double model_relative_error(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b) {
  double diff = 0, scale = 0;
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t i = 0; i < a[k].size(); ++i) {
      diff = std::max(diff, std::fabs(static_cast<double>(a[k][i]) - b[k][i]));
      scale = std::max(scale, std::fabs(static_cast<double>(b[k][i])));
    }
  return diff / std::max(scale, 1e-30);
}

void expect_same_update(int n, const char* synthetic) {
  ScopedEnv topo("HWLOC_SYNTHETIC", synthetic);
  const Trained reference = train(0, kSteps);
  const Trained run = train(n, kSteps);
  ASSERT_EQ(run.params.size(), reference.params.size());
  ASSERT_EQ(run.velocities.size(), reference.velocities.size()) << "the root keeps one velocity per parameter";
  ASSERT_FALSE(reference.velocities.empty());
  models::Cnn fresh(cifar_quick(kBatch, true));
  fresh.init_params();
  const std::vector<Tensor> params = fresh.graph.params();
  EXPECT_LT(model_relative_error(run.params, reference.params), 1e-6) << "the updated weights";
  for (size_t k = 0; k < reference.params.size(); ++k) {
    if (n == 1) {  // nothing is summed: the one solver bitwise
      EXPECT_TRUE(same_bits(run.params[k], reference.params[k])) << "parameter " << k;
      EXPECT_TRUE(same_bits(run.velocities[k], reference.velocities[k])) << "velocity " << k;
    } else {
      // A tensor that starts at zero (the biases) is nothing but -lr times its summed gradients, so its own
      // relative error is the float32 summation error of a bias gradient (a sum over batch and positions with
      // cancellation) in another order: measured 1.1e-6 to 1.7e-6 for conv biases with 2 and 4 replicas. The
      // others are within 1e-6 of their own scale.
      const float* init = fresh.graph.data(params[k]);
      const bool from_zero = std::all_of(init, init + params[k].shape().numel(), [](float v) { return v == 0.0f; });
      const double tolerance = from_zero ? 1e-5 : 1e-6;
      EXPECT_LT(relative_error(run.params[k], reference.params[k]), tolerance) << "parameter " << k;
      EXPECT_LT(relative_error(run.velocities[k], reference.velocities[k]), 1e-5) << "velocity " << k;
    }
    for (size_t r = 1; r < run.replica_params.size(); ++r)
      EXPECT_TRUE(same_bits(run.replica_params[r][k], run.params[k])) << "replica " << r << " parameter " << k;
  }
}

TEST(ReplicasMomentum, CifarQuickOneReplicaIsTheOneSolverBitwise) { expect_same_update(1, nullptr); }
TEST(ReplicasMomentum, CifarQuickTwoReplicasGiveTheOneSolverUpdate) { expect_same_update(2, nullptr); }
TEST(ReplicasMomentum, CifarQuickFourReplicasGiveTheOneSolverUpdate) {
  expect_same_update(4, "pack:1 numa:1 core:4 pu:1");
}

TEST(ReplicasMomentum, MissingVelocitiesAreAClearError) {
  ScopedEnv replicas("CORUN_REPLICAS", "2");
  ScopedEnv no_numa("CORUN_NUMA", nullptr);
  models::CnnConfig plain = cifar_quick(4, false);
  plain.momentum = 0.0f;  // no velocities in these graphs
  models::Cnn a(plain), b(plain);
  Engine eng(test_config("eager"));
  EXPECT_CORUN_ERROR(eng.run_replicated({&a.graph, &b.graph}, 0.01f, 0.9f), Status::invalid_argument,
                     "conv1.w.velocity");
  EXPECT_CORUN_ERROR(eng.run_replicated({&a.graph, &b.graph}, 0.01f, 1.5f), Status::invalid_argument, "momentum");
}

}  // namespace
}  // namespace corun::test
