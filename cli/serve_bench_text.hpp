// corun serve-bench --model text-similarity: the latency of DeepCPU's text similarity model (seed 002) on
// the engine, built in (corun::models::TextSimilarity) or imported (--onnx FILE, e.g. scripts/export-onnx.py
// --model text_similarity). cli/serve_bench.cpp parses the flags and calls serve_text_similarity.
#pragma once

#include <corun/engine.hpp>

#include <string>

namespace corun::cli {

struct TextServeOptions {
  std::string onnx;  ///< empty: the built-in model
  int embed = 200, hidden = 512, seq = 20, batch = 1;  ///< the built-in model's sizes (DeepCPU's Table 4 setting)
  int vocab = 10000;
  int onnx_batch = 0;  ///< --batch for a file with a dynamic batch (0: the file's)
  long requests = 200, seed = 1;
};

/// Times opt.requests requests (after one warm-up) of one random pair of sentences each: writes the token
/// ids, runs the graph, reads the cosines. Prints the model, the median and p99 latency and the cosines of
/// the pairs. Returns the exit status (0); throws corun::Error for a file it cannot serve.
int serve_text_similarity(const TextServeOptions& opt, const Config& config);

}  // namespace corun::cli
