// corun/models/text_similarity.hpp — DeepCPU's text similarity model (seed 002, section 6; its Table 4
// setting: input 200, hidden 512, source and target length 20, batch 1): two sentences encoded by one
// bidirectional GRU, compared by the cosine of their encodings.
//
//   corun::models::TextSimilarity m({});            // inference graph
//   m.init_params();                                 // before the graph is bound to an engine
//   eng.write(m.graph, m.source_ids, ids_a); eng.write(m.graph, m.target_ids, ids_b); eng.run(m.graph);
//   std::vector<float> cos = eng.read(m.graph, m.similarity);   // [batch] cosines
//
// Graph: token ids [len, batch] -> embedding [len * batch, embed] -> reshaped [len, batch, embed] ->
// corun::rnn::gru (bidirectional, ONNX layout, shared by both sentences) -> Y_h [2, batch, hidden] -> the
// two directions' last states side by side, [batch, 2 * hidden]: the sentence's encoding. The graph ends
// in the cosine per batch entry, a.b / sqrt(a.a * b.b) (sum, mul, sqrt and div nodes), in the order of
// scripts/export-onnx.py's text_similarity, so that this model and that export imported by
// corun::import_onnx are the same computation (the same weights give the same cosines; the ONNX GRU layout
// of W, R and B is this model's). Like PyTorch's, a zero encoding gives NaN.
#pragma once

#include <corun/graph.hpp>

#include <cstdint>
#include <vector>

namespace corun::models {

struct TextSimilarityConfig {
  int64_t vocab = 10000;
  int64_t embed = 200;        ///< DeepCPU's "input 200"
  int64_t hidden = 512;
  int64_t source_len = 20;
  int64_t target_len = 20;
  int64_t batch = 1;          ///< sentence pairs per run
  uint64_t seed = 7;
};

struct TextSimilarity {
  explicit TextSimilarity(const TextSimilarityConfig& config);

  TextSimilarityConfig config;
  Graph graph;
  Tensor source_ids;    ///< [source_len, batch] token ids in 0..vocab-1 (exact integers in f32)
  Tensor target_ids;    ///< [target_len, batch]
  Tensor source_code;   ///< [batch, 2 * hidden] encoding of the source sentence (kept)
  Tensor target_code;   ///< [batch, 2 * hidden]
  Tensor dot;           ///< [batch] source . target (kept)
  Tensor source_norm2;  ///< [batch] source . source (kept)
  Tensor target_norm2;  ///< [batch] target . target (kept)
  Tensor similarity;    ///< [batch] dot / sqrt(source_norm2 * target_norm2): the cosines (kept)

  /// Embeddings uniform(-0.1, 0.1), GRU weights and biases uniform(-1/sqrt(hidden), 1/sqrt(hidden)) (PyTorch's
  /// init), from config.seed; before the graph is bound to an Engine.
  void init_params();
};

}  // namespace corun::models
