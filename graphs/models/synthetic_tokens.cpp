#include <corun/models/synthetic_tokens.hpp>

#include "base/check.hpp"

#include <random>

namespace corun::models {

SyntheticTokens::SyntheticTokens(const SyntheticTokensConfig& config) : config_(config) {
  CORUN_CHECK(config.batch > 0 && config.length > 0 && config.vocab > 0 && config.classes > 0,
              Status::invalid_argument,
              "synthetic tokens: batch, length, vocab and classes must be positive (got batch="
                  << config.batch << " length=" << config.length << " vocab=" << config.vocab
                  << " classes=" << config.classes << ")");
}

void SyntheticTokens::make_batch(uint64_t k, std::vector<float>& ids, std::vector<float>& targets) const {
  const SyntheticTokensConfig& c = config_;
  ids.assign(static_cast<size_t>(c.batch * c.length), 0.0f);
  targets.assign(static_cast<size_t>(c.batch * c.classes), 0.0f);
  // One generator per batch, seeded from (seed, k): batch k is the same whatever ran before it (a resumed
  // run sees the batches of an uninterrupted one).
  std::mt19937_64 rng(c.seed * 0x9E3779B97F4A7C15ull + k);
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t cls = static_cast<int64_t>(rng() % static_cast<uint64_t>(c.classes));
    targets[static_cast<size_t>(b * c.classes + cls)] = 1.0f;
    // Class ids: cls, cls + classes, ... below vocab (none when cls >= vocab: then every id is uniform).
    const int64_t in_class = cls < c.vocab ? (c.vocab - cls + c.classes - 1) / c.classes : 0;
    for (int64_t t = 0; t < c.length; ++t) {
      const uint64_t r = rng();
      const int64_t id = (r & 1u) && in_class > 0
                             ? cls + c.classes * static_cast<int64_t>((r >> 1) % static_cast<uint64_t>(in_class))
                             : static_cast<int64_t>((r >> 1) % static_cast<uint64_t>(c.vocab));
      ids[static_cast<size_t>(b * c.length + t)] = static_cast<float>(id);
    }
  }
}

}  // namespace corun::models
