// models::SyntheticTokens (corun train --onnx on token-id inputs): ids in range and exact, one-hot targets,
// batch k the same whatever ran before, and the class visible in the ids (about half of a row's ids are
// its class's), so that a model pooling its embeddings can learn the task; bad extents are refused.
#include <corun/error.hpp>
#include <corun/models/synthetic_tokens.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace corun {
namespace {

TEST(SyntheticTokens, IdsInRangeOneHotTargetsAndTheClassInTheIds) {
  const models::SyntheticTokensConfig c{64, 16, 100, 10, 3};
  const models::SyntheticTokens data(c);
  std::vector<float> ids, targets;
  data.make_batch(5, ids, targets);
  ASSERT_EQ(ids.size(), 64u * 16u);
  ASSERT_EQ(targets.size(), 64u * 10u);
  long in_class = 0;
  for (int64_t b = 0; b < c.batch; ++b) {
    int cls = -1, ones = 0;
    for (int k = 0; k < 10; ++k) {
      const float t = targets[static_cast<size_t>(b * 10 + k)];
      EXPECT_TRUE(t == 0.0f || t == 1.0f);
      if (t == 1.0f) cls = k, ++ones;
    }
    ASSERT_EQ(ones, 1) << "row " << b;
    for (int64_t t = 0; t < c.length; ++t) {
      const float id = ids[static_cast<size_t>(b * c.length + t)];
      EXPECT_EQ(id, std::floor(id));
      EXPECT_GE(id, 0.0f);
      EXPECT_LT(id, 100.0f);
      in_class += static_cast<int>(id) % 10 == cls;
    }
  }
  // Half the ids are drawn from the class, and a tenth of the uniform ones fall in it: ~55%, not ~10%.
  EXPECT_GT(in_class, 64 * 16 * 45 / 100);
  EXPECT_LT(in_class, 64 * 16 * 65 / 100);

  std::vector<float> other_ids, other_targets, again_ids, again_targets;
  data.make_batch(6, other_ids, other_targets);
  data.make_batch(5, again_ids, again_targets);
  EXPECT_EQ(again_ids, ids);  // batch 5 again, after batch 6
  EXPECT_EQ(again_targets, targets);
  EXPECT_NE(other_ids, ids);
}

TEST(SyntheticTokens, AVocabularySmallerThanTheClassesStillGivesValidIds) {
  const models::SyntheticTokens data({8, 4, 3, 10, 1});
  std::vector<float> ids, targets;
  data.make_batch(0, ids, targets);
  for (float id : ids) EXPECT_TRUE(id >= 0.0f && id < 3.0f) << id;
}

TEST(SyntheticTokens, ExtentsMustBePositive) {
  EXPECT_THROW(models::SyntheticTokens({8, 4, 0, 10, 1}), Error);
  EXPECT_THROW(models::SyntheticTokens({0, 4, 10, 10, 1}), Error);
}

}  // namespace
}  // namespace corun
