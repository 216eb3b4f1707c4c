// corun serve-bench --model text-similarity: one graph per model (built in or imported), each request one
// write of the two sentences' ids, one Engine::run and one read of the cosines, as a server answering one
// pair of sentences at a time would do.
#include "cli/serve_bench_text.hpp"

#include <corun/models/text_similarity.hpp>
#include <corun/onnx.hpp>

#include "base/check.hpp"
#include "base/memory_budget.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace corun::cli {
namespace {

struct Served {
  Graph graph;
  std::vector<Tensor> inputs;
  std::vector<int64_t> id_limits;  // per input: ids below it (0: a float input)
  Tensor output;
  std::string title;
};

Served built_in(const TextServeOptions& o) {
  models::TextSimilarityConfig c;
  c.vocab = o.vocab, c.embed = o.embed, c.hidden = o.hidden, c.source_len = c.target_len = o.seq, c.batch = o.batch;
  c.seed = static_cast<uint64_t>(o.seed);
  models::TextSimilarity m(c);
  m.init_params();
  char title[256];
  std::snprintf(title, sizeof(title), "text-similarity (built in) vocab=%d embed=%d hidden=%d seq=%d batch=%d",
                o.vocab, o.embed, o.hidden, o.seq, o.batch);
  return {std::move(m.graph), {m.source_ids, m.target_ids}, {c.vocab, c.vocab}, m.similarity, title};
}

Served imported(const TextServeOptions& o) {
  OnnxImportOptions io;
  io.batch = o.onnx_batch;
  // The file's sizes (and --batch's effect on them) are known only as it is imported: its tensors are capped.
  const MemoryBudget budget = memory_budget();
  set_tensor_memory_limit(budget.bytes, budget.source, "lower --batch or serve a smaller model");
  OnnxModel m = import_onnx_model(o.onnx, io);
  CORUN_CHECK(m.outputs.size() == 1, Status::invalid_argument,
              "corun serve-bench --onnx " << o.onnx << ": the model has " << m.outputs.size()
                                          << " outputs; serving needs one (the similarity)");
  CORUN_CHECK(m.inputs.size() == 2 && m.outputs[0].shape().rank == 1, Status::invalid_argument,
              "corun serve-bench --onnx " << o.onnx << ": the model has " << m.inputs.size()
                                          << " inputs and the output shape " << m.outputs[0].shape().str()
                                          << "; a text-similarity model takes two sentences and outputs one "
                                             "cosine per pair, [batch] (scripts/export-onnx.py --model "
                                             "text_similarity)");
  std::string shapes;
  for (size_t k = 0; k < m.inputs.size(); ++k) {
    CORUN_CHECK(m.index_limits[k] >= 0, Status::invalid_argument,
                "corun serve-bench --onnx " << o.onnx << ": the integer input '" << m.inputs[k].name()
                                            << "' indexes no Gather directly, so the range of valid ids is unknown");
    shapes += (shapes.empty() ? "" : ", ") + m.inputs[k].name() + " " + m.inputs[k].shape().str();
  }
  Served s{std::move(m.graph), m.inputs, m.index_limits, m.outputs[0], ""};
  s.title = "text-similarity (" + o.onnx + ", opset " + std::to_string(m.opset) + ") inputs " + shapes;
  return s;
}

}  // namespace

int serve_text_similarity(const TextServeOptions& o, const Config& config) {
  Served s = o.onnx.empty() ? built_in(o) : imported(o);  // checked before the engine starts
  // One random request, reused: ids below each table's rows, floats in [-1, 1).
  std::mt19937_64 rng(static_cast<uint64_t>(o.seed) + 1);
  std::vector<std::vector<float>> request;
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    std::vector<float> v(static_cast<size_t>(s.inputs[k].shape().numel()));
    for (float& x : v)
      x = s.id_limits[k] > 0 ? static_cast<float>(rng() % static_cast<uint64_t>(s.id_limits[k]))
                             : std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
    request.push_back(std::move(v));
  }
  Engine engine(config);
  std::vector<float> cosines;
  auto serve_one = [&] {
    for (size_t k = 0; k < s.inputs.size(); ++k) engine.write(s.graph, s.inputs[k], request[k]);
    engine.run(s.graph);
    cosines = engine.read(s.graph, s.output);
  };
  serve_one();  // warm-up: binds the graph, calibrates the policy's models
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(o.requests));
  for (long i = 0; i < o.requests; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    serve_one();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  engine.release(s.graph);
  std::sort(ms.begin(), ms.end());
  const double median = ms[ms.size() / 2];
  const double p99 = ms[std::min(ms.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(ms.size())))];
  std::printf("serve-bench: %s (%s, %d StarPU workers)\n", s.title.c_str(), engine.info().policy.c_str(),
              engine.info().workers);
  std::printf("latency: median %.4f ms p99 %.4f ms over %ld requests\n", median, p99, o.requests);
  std::printf("similarity:");
  for (float c : cosines) std::printf(" %.6f", static_cast<double>(c));
  std::printf("\n");
  return 0;
}

}  // namespace corun::cli
