// wide&deep on StarPU: training lowers the loss on the synthetic click task, the inference graph computes
// what plain loops compute, and a category id outside the vocabulary is a clear error.
#include "engine_test_util.hpp"

#include <corun/engine.hpp>
#include <corun/models/wide_deep.hpp>

#include <gtest/gtest.h>

#include <numeric>

namespace corun {
namespace {

using test::test_config;

void write_batch(Engine& eng, models::WideDeep& m, const models::TabularTask& task, uint64_t k) {
  std::vector<float> cats, dense, labels;
  task.make_batch(k, cats, dense, labels);
  eng.write(m.graph, m.categories, cats);
  eng.write(m.graph, m.dense, dense);
  eng.write(m.graph, m.labels, labels);
}

TEST(WideDeep, TrainingLowersTheLoss) {
  models::WideDeepConfig cfg;  // the seed's sizes: 26 tables of 10000 x 16, MLP 416-256-128-1, batch 256
  models::WideDeep m(cfg);
  m.init_params();
  const models::TabularTask task(cfg);
  Engine eng(test_config());
  std::vector<float> losses;
  constexpr int kIters = 100;
  for (int it = 0; it < kIters; ++it) {
    write_batch(eng, m, task, static_cast<uint64_t>(it));
    eng.run(m.graph);
    losses.push_back(eng.read(m.graph, m.loss)[0]);
  }
  eng.release(m.graph);
  const double first = std::accumulate(losses.begin(), losses.begin() + 10, 0.0) / 10;
  const double last = std::accumulate(losses.end() - 10, losses.end(), 0.0) / 10;
  std::printf("wide&deep loss: first 10 steps %.4f, last 10 steps %.4f\n", first, last);
  EXPECT_NEAR(losses[0], std::log(2.0), 0.05) << "an untrained model should be near chance";
  EXPECT_LT(last, 0.9 * losses[0]) << "the loss did not fall well below chance";
  EXPECT_LT(last, first) << "the loss did not keep falling";
}

// The inference graph against the model's equations evaluated in double on the same parameters.
TEST(WideDeep, InferenceMatchesPlainLoops) {
  models::WideDeepConfig cfg;
  cfg.batch = 3, cfg.vocab = 50, cfg.categorical = 4, cfg.embed_dim = 5, cfg.dense = 3, cfg.hidden = {7, 6};
  models::WideDeep m(cfg, /*training=*/false);
  m.init_params();
  std::vector<float> cats, dense, labels;
  models::TabularTask(cfg).make_batch(7, cats, dense, labels);
  auto p = [&](const std::string& name) { return test::host_copy(m.graph, m.graph.find(name)); };
  std::vector<double> want(static_cast<size_t>(cfg.batch));
  for (int b = 0; b < cfg.batch; ++b) {
    std::vector<double> h;
    for (int f = 0; f < cfg.categorical; ++f) {
      const auto table = p("emb" + std::to_string(f));
      const auto id = static_cast<size_t>(cats[static_cast<size_t>(b * cfg.categorical + f)]);
      for (int d = 0; d < cfg.embed_dim; ++d) h.push_back(table[id * cfg.embed_dim + d]);
    }
    const std::vector<int> widths = {7, 6, 1};
    for (size_t l = 0; l < widths.size(); ++l) {
      const auto w = p("w" + std::to_string(l));
      const auto bias = p("b" + std::to_string(l));
      std::vector<double> next(static_cast<size_t>(widths[l]));
      for (int j = 0; j < widths[l]; ++j) {
        double acc = bias[static_cast<size_t>(j)];
        for (size_t i = 0; i < h.size(); ++i) acc += h[i] * w[i * widths[l] + j];
        next[static_cast<size_t>(j)] = l + 1 < widths.size() ? std::max(acc, 0.0) : acc;
      }
      h = next;
    }
    const auto ww = p("w_wide");
    for (int j = 0; j < cfg.dense; ++j) h[0] += dense[static_cast<size_t>(b * cfg.dense + j)] * ww[static_cast<size_t>(j)];
    want[static_cast<size_t>(b)] = h[0];
  }
  Engine eng(test_config());
  eng.write(m.graph, m.categories, cats);
  eng.write(m.graph, m.dense, dense);
  eng.run(m.graph);
  const std::vector<float> got = eng.read(m.graph, m.logits);
  eng.release(m.graph);
  for (int b = 0; b < cfg.batch; ++b)
    EXPECT_NEAR(got[static_cast<size_t>(b)], want[static_cast<size_t>(b)], 1e-5) << "row " << b;
}

TEST(WideDeep, CategoryOutsideTheVocabularyIsAnError) {
  models::WideDeepConfig cfg;
  cfg.batch = 2, cfg.vocab = 10;
  models::WideDeep m(cfg, /*training=*/false);
  std::vector<float> cats(static_cast<size_t>(2 * cfg.categorical), 3.0f);
  cats[5] = 10.0f;  // one past the last row
  Engine eng(test_config());
  eng.write(m.graph, m.categories, cats);
  try {
    eng.run(m.graph);
    ADD_FAILURE() << "an id outside the vocabulary was accepted";
  } catch (const Error& e) {
    EXPECT_TRUE(test::contains(e.what(), "index 10 at position 0"));
    EXPECT_TRUE(test::contains(e.what(), "[0, 10)"));
  }
  eng.release(m.graph);
}

}  // namespace
}  // namespace corun
