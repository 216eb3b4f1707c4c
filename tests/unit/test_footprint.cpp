// cli/footprint.cpp: the estimates `corun train` checks before building are lower bounds of the graphs'
// real tensor bytes and task counts (so a run that fits is never refused) and not far below them (so an
// absurd size is refused), and the refusal names the flags, the estimate and the limit.
#include "cli/footprint.hpp"

#include <corun/error.hpp>
#include <corun/models/cnn.hpp>
#include <corun/models/lstm.hpp>
#include <corun/models/text_similarity.hpp>
#include <corun/models/wide_deep.hpp>
#include <corun/serve.hpp>

#include <gtest/gtest.h>

#include <string>

namespace {

double tensor_bytes(const corun::Graph& g) {
  double b = 0;
  for (int i = 0; i < g.num_values(); ++i) b += 4.0 * static_cast<double>(g.value(i).shape().numel());
  return b;
}

TEST(Footprint, LstmEstimateIsALowerBoundWithinAFactorOfFour) {
  for (bool fused : {true, false})
    for (bool phased : {false, true})
      for (int layers : {1, 3})
        for (int seq : {1, 6})
          for (int hidden : {8, 48}) {
            corun::models::LstmConfig c;
            c.layers = layers, c.seq = seq, c.batch = 6, c.hidden = hidden, c.input = hidden;
            c.fused_cell = fused, c.phased = phased;
            const corun::models::Lstm m(c);
            const corun::cli::Footprint f = corun::cli::lstm_footprint(c);
            // The estimate adds 128 bytes per task for the nodes themselves; the tensors alone bound it too.
            const double real = tensor_bytes(m.graph) + 128.0 * m.graph.num_nodes();
            SCOPED_TRACE("fused=" + std::to_string(fused) + " phased=" + std::to_string(phased) + " layers=" +
                         std::to_string(layers) + " seq=" + std::to_string(seq) + " hidden=" + std::to_string(hidden));
            EXPECT_LE(f.bytes, real);
            EXPECT_GE(f.bytes, real / 4.0);  // the unfused and phased cells hold more than the fused one
            EXPECT_LE(f.tasks, m.graph.num_nodes());
          }
}

TEST(Footprint, CnnEstimateIsALowerBound) {
  for (const std::string size : {"small", "medium"}) {
    for (corun::models::CnnConfig c : {corun::models::pathnet_config(size), corun::models::googlenet_config(size)}) {
      c.batch = 2;
      const corun::models::Cnn m(c);
      const corun::cli::Footprint f = corun::cli::cnn_footprint(c);
      EXPECT_LE(f.bytes, tensor_bytes(m.graph) + 128.0 * m.graph.num_nodes()) << size;
      EXPECT_LE(f.tasks, m.graph.num_nodes()) << size;
    }
  }
}

// Issue 52 item 4: corun infer and serve-bench check the inference graphs they build, so their estimates must
// be lower bounds of those graphs too (a run that fits is never refused).
TEST(Footprint, InferenceEstimatesAreLowerBounds) {
  for (int seq : {1, 6})
    for (int hidden : {8, 48}) {
      corun::models::LstmConfig c;
      c.layers = 2, c.seq = seq, c.batch = 1, c.hidden = hidden, c.input = hidden;
      const corun::models::Lstm m(c, /*training=*/false);
      const corun::cli::Footprint f = corun::cli::lstm_footprint(c, /*training=*/false);
      EXPECT_LE(f.bytes, tensor_bytes(m.graph) + 128.0 * m.graph.num_nodes()) << seq << " " << hidden;
      EXPECT_GE(f.bytes, (tensor_bytes(m.graph) + 128.0 * m.graph.num_nodes()) / 8.0) << seq << " " << hidden;
      EXPECT_LE(f.tasks, m.graph.num_nodes());
    }
  for (corun::models::CnnConfig c : {corun::models::cifar_quick_config(), corun::models::pathnet_config("small"),
                                     corun::models::googlenet_config("small")}) {
    c.batch = 1;
    const corun::models::Cnn m(c, /*training=*/false);
    const corun::cli::Footprint f = corun::cli::cnn_footprint(c, /*training=*/false);
    EXPECT_LE(f.bytes, tensor_bytes(m.graph) + 128.0 * m.graph.num_nodes());
    EXPECT_LE(f.tasks, m.graph.num_nodes());
  }
  for (int batch : {1, 16}) {
    corun::models::WideDeepConfig c;
    c.batch = batch;
    const corun::models::WideDeep m(c, /*training=*/false);
    const corun::cli::Footprint f = corun::cli::wide_deep_footprint(c);
    EXPECT_LE(f.bytes, tensor_bytes(m.graph) + 128.0 * m.graph.num_nodes()) << batch;
    EXPECT_GE(f.bytes, tensor_bytes(m.graph) / 2.0) << batch;  // the tables dominate
    EXPECT_LE(f.tasks, m.graph.num_nodes());
  }
  for (int seq : {2, 5}) {
    corun::models::TextSimilarityConfig c;
    c.vocab = 50, c.embed = 8, c.hidden = 12, c.source_len = c.target_len = seq, c.batch = 3;
    const corun::models::TextSimilarity m(c);
    const corun::cli::Footprint f = corun::cli::text_similarity_footprint(c);
    const double real = tensor_bytes(m.graph) + 128.0 * m.graph.num_nodes();
    EXPECT_LE(f.bytes, real) << seq;
    EXPECT_GE(f.bytes, real / 8.0) << seq;
    EXPECT_LE(f.tasks, m.graph.num_nodes());
  }
}

// serve-bench --seq 999999999 printed only std::bad_alloc: the estimate is huge and finite, the default small.
TEST(Footprint, ServingEstimateGrowsWithTheRequest) {
  corun::serve::ModelSpec spec;
  spec.cell = corun::serve::Cell::gru, spec.input = 64, spec.hidden = 64, spec.layers = 2, spec.bidirectional = true;
  const double small = corun::cli::serve_rnn_footprint(spec, 1, 20).bytes;
  EXPECT_GT(small, 4.0 * 2 * 3 * 64 * (64 + 64));  // at least the first layer's weights
  EXPECT_LT(small, 64.0 * (1 << 20));
  EXPECT_GT(corun::cli::serve_rnn_footprint(spec, 1, 999999999).bytes, 5e11);
  corun::models::TextSimilarityConfig c;
  c.source_len = c.target_len = 999999999;
  EXPECT_GT(corun::cli::text_similarity_footprint(c).bytes, 1e13);
}

TEST(Footprint, AbsurdSizesAreRefusedNamingFlagEstimateAndLimit) {
  corun::models::LstmConfig c = corun::models::lstm_config("small");
  c.seq = 999999999;
  try {
    corun::cli::check_fits(corun::cli::lstm_footprint(c), "--seq 999999999", "lstm seq=999999999", 8.0 * (1u << 30),
                           "MemAvailable in /proc/meminfo", "lower --seq");
    FAIL() << "not refused";
  } catch (const corun::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("--seq 999999999 asks for at least 2.6 PiB"), std::string::npos) << msg;  // stacked dW operands included
    EXPECT_NE(msg.find("more than the 8.0 GiB available (MemAvailable in /proc/meminfo); lower --seq"),
              std::string::npos)
        << msg;
    EXPECT_EQ(e.status(), corun::Status::invalid_config);
  }
  // The product of flags capped at 1e9 each overflows every integer: the estimate must stay finite and huge.
  c.seq = 1000000000, c.hidden = 1000000000, c.batch = 1000000000, c.layers = 1000000000;
  EXPECT_GT(corun::cli::lstm_footprint(c).bytes, 1e37);
  // The default sizes fit in a small machine.
  EXPECT_LT(corun::cli::lstm_footprint(corun::models::lstm_config("large")).bytes, 2.0 * (1u << 30));
}

TEST(Footprint, ShapesWhoseElementCountOverflowsAreRefused) {
  // Extents from flags or files multiply: 2^31 x 2^31 x 4 = 2^64 would wrap to 0 elements.
  const int64_t big = int64_t{1} << 31;
  try {
    (void)corun::Shape{big, big, 4};
    FAIL() << "not refused";
  } catch (const corun::Error& e) {
    EXPECT_NE(std::string(e.what()).find("holds more than 2^60 elements"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)(corun::Shape{3037000500, 3037000500}), corun::Error);  // the product overflows int64
  EXPECT_EQ((corun::Shape{1 << 20, 1 << 20}).numel(), int64_t{1} << 40);
}

}  // namespace
