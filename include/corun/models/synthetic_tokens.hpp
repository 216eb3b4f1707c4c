// corun/models/synthetic_tokens.hpp — a learnable synthetic task over token ids, for models whose input is
// integer ids (corun train --onnx on a transformer exported by scripts/export-onnx.py). Each row of the
// batch has a class c; half of its tokens (on average) are drawn from class c's ids {t : t % classes == c},
// the rest uniformly from 0..vocab-1, so a model that pools its token embeddings can tell the class.
//
//   corun::models::SyntheticTokens data({.batch = 16, .length = 16, .vocab = 100, .classes = 10});
//   data.make_batch(k, ids, targets);  // ids [16 * 16] exact integers in f32, targets one-hot [16 * 10]
#pragma once

#include <cstdint>
#include <vector>

namespace corun::models {

struct SyntheticTokensConfig {
  int64_t batch = 1;
  int64_t length = 1;   ///< ids per row (the input's numel / batch)
  int64_t vocab = 1;    ///< ids are in 0..vocab-1
  int64_t classes = 2;  ///< columns of the one-hot targets
  uint64_t seed = 42;
};

class SyntheticTokens {
 public:
  /// Throws corun::Error (invalid_argument) unless every extent is positive.
  explicit SyntheticTokens(const SyntheticTokensConfig& config);
  /// Batch k (the same k gives the same batch): ids [batch * length] and one-hot targets [batch * classes].
  void make_batch(uint64_t k, std::vector<float>& ids, std::vector<float>& targets) const;

 private:
  SyntheticTokensConfig config_;
};

}  // namespace corun::models
