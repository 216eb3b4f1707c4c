// corun serve-bench: latency of the RNN serving runtime (corun::serve::Server) or of the two baselines of
// the DeepCPU comparison (per-step GEMMs on multithreaded OpenBLAS, without StarPU): the chosen plan,
// median and p99 latency over --requests requests of one random sequence, and GFLOP/s. --model
// text-similarity serves DeepCPU's text similarity model instead (cli/serve_bench_text.cpp).
#include "cli/args.hpp"
#include "cli/commands.hpp"
#include "cli/footprint.hpp"
#include "cli/output_paths.hpp"
#include "cli/serve_bench_text.hpp"
#include "cli/shared_machine.hpp"

#include <corun/engine.hpp>
#include <corun/machine.hpp>
#include <corun/serve.hpp>

#include "serve/kernels/baselines.hpp"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace corun::cli {

namespace {

const std::vector<FlagSpec> kFlags = {
    {"--model", true, "rnn (default: the layer --cell gives) or text-similarity (DeepCPU's, on the engine)"},
    {"--onnx", true, "with --model text-similarity: serve this ONNX file (scripts/export-onnx.py --model "
                     "text_similarity) instead of the built-in model"},
    {"--cell", true, "lstm or gru (required)"},
    {"--input", true, "input features E (required)"},
    {"--hidden", true, "hidden size H (required)"},
    {"--batch", true, "batch size B (required)"},
    {"--seq", true, "sequence length T (required)"},
    {"--layers", true, "stacked layers (default 1)"},
    {"--bidirectional", false, "two directions per layer"},
    {"--requests", true, "timed requests after one warm-up (default 200)"},
    {"--impl", true, "corun (StarPU, planned; default), gemms (per step one OpenBLAS GEMM per gate and input) or "
                     "fused (per step one fused OpenBLAS GEMM); the baselines use every allocated core, no StarPU"},
    {"--weights", true, "directory of .npy weights named like torch.nn.LSTM/GRU's state_dict (default: random)"},
    {"--seed", true, "seed of the random weights and input (default 1)"},
    {"--candidates", false, "print every plan the search timed (with --recalibrate or an empty cache)"},
    {"--recalibrate", false, "ignore the plan cache and search again (the new plan replaces the cached one)"},
    {"--help", false, "show this help"},
};

std::string usage() {
  return "usage: corun serve-bench --cell lstm|gru --input E --hidden H --batch B --seq T [--layers L] "
         "[--bidirectional] [--requests N] [--impl corun|gemms|fused]\n"
         "       corun serve-bench --model text-similarity [--onnx FILE | --input E --hidden H --seq T] [--batch B] "
         "[--requests N]\n" +
         describe(kFlags);
}

struct Options {
  serve::ModelSpec spec;
  int batch = 0, seq = 0;
  long requests = 200, seed = 1;
  std::string impl = "corun", weights;
  bool recalibrate = false, candidates = false;
  bool text_similarity = false;  // --model text-similarity: `text` holds the rest
  TextServeOptions text;
};

long required(const Args& a, const char* flag) {
  if (!a.has(flag)) throw UsageError(std::string(flag) + " is required");
  return a.positive(flag, 1);
}

// --model text-similarity: the RNN layer's flags do not apply; the sizes are the built-in model's (or the
// file's, with --onnx).
Options parse_text_similarity(const Args& a) {
  for (const char* flag : {"--cell", "--layers", "--bidirectional", "--impl", "--weights", "--candidates",
                           "--recalibrate"})
    if (a.has(flag)) throw UsageError(std::string(flag) + " applies to --model rnn, not to text-similarity");
  Options o;
  o.text_similarity = true;
  TextServeOptions& t = o.text;
  t.onnx = a.str("--onnx", "");
  if (a.has("--onnx") && t.onnx.empty()) throw UsageError("--onnx needs a file");
  if (!t.onnx.empty())
    for (const char* flag : {"--input", "--hidden", "--seq"})
      if (a.has(flag)) throw UsageError(std::string(flag) + " does not apply to --onnx: the file gives the sizes");
  t.embed = static_cast<int>(a.positive("--input", t.embed));
  t.hidden = static_cast<int>(a.positive("--hidden", t.hidden));
  t.seq = static_cast<int>(a.positive("--seq", t.seq));
  t.batch = static_cast<int>(a.positive("--batch", t.batch));
  t.onnx_batch = a.has("--batch") ? t.batch : 0;
  t.requests = a.positive("--requests", t.requests);
  t.seed = a.positive("--seed", t.seed);
  if (t.onnx.empty()) {  // before the model is built: each tensor is allocated as the graph grows
    models::TextSimilarityConfig c;
    c.vocab = t.vocab, c.embed = t.embed, c.hidden = t.hidden, c.source_len = c.target_len = t.seq, c.batch = t.batch;
    Footprint f = text_similarity_footprint(c);
    f.bytes += 8.0 * static_cast<double>(t.requests);  // the requests' times
    const std::string given = a.given({"--input", "--hidden", "--seq", "--batch", "--requests"});
    check_fits_in_memory(f, given.empty() ? "text-similarity" : given,
                         "text-similarity embed=" + std::to_string(t.embed) + " hidden=" + std::to_string(t.hidden) +
                             " seq=" + std::to_string(t.seq) + " batch=" + std::to_string(t.batch),
                         "lower --seq, --batch, --hidden, --input or --requests");
  }  // an --onnx file's sizes are known only as it is imported: serve_text_similarity caps its tensors
  return o;
}

Options parse(int argc, char** argv, bool* help) {
  Args a(argc, argv, 2, kFlags);
  Options o;
  *help = a.has("--help");
  if (*help) return o;
  const std::string model = a.str("--model", "rnn");
  if (model != "rnn" && model != "text-similarity")
    throw UsageError("--model must be rnn or text-similarity, got '" + model + "'");
  if (model == "text-similarity") return parse_text_similarity(a);
  if (a.has("--onnx")) throw UsageError("--onnx needs --model text-similarity (the RNN layers are built in)");
  if (!a.has("--cell")) throw UsageError("--cell is required (lstm or gru)");
  const std::string cell = a.str("--cell", "");
  if (cell != "lstm" && cell != "gru") throw UsageError("--cell must be lstm or gru, got '" + cell + "'");
  o.spec.cell = cell == "lstm" ? serve::Cell::lstm : serve::Cell::gru;
  o.spec.input = static_cast<int>(required(a, "--input"));
  o.spec.hidden = static_cast<int>(required(a, "--hidden"));
  o.batch = static_cast<int>(required(a, "--batch"));
  o.seq = static_cast<int>(required(a, "--seq"));
  o.spec.layers = static_cast<int>(a.positive("--layers", 1));
  o.spec.bidirectional = a.has("--bidirectional");
  o.requests = a.positive("--requests", o.requests);
  o.seed = a.positive("--seed", o.seed);
  o.impl = a.str("--impl", o.impl);
  if (o.impl != "corun" && o.impl != "gemms" && o.impl != "fused")
    throw UsageError("--impl must be corun, gemms or fused, got '" + o.impl + "'");
  o.weights = a.str("--weights", "");
  o.recalibrate = a.has("--recalibrate");
  o.candidates = a.has("--candidates");
  Footprint f = serve_rnn_footprint(o.spec, o.batch, o.seq);  // before the weights and the request exist
  f.bytes += 8.0 * static_cast<double>(o.requests);           // the requests' times
  check_fits_in_memory(f, a.given({"--input", "--hidden", "--batch", "--seq", "--layers", "--requests"}),
                       o.spec.str() + " batch=" + std::to_string(o.batch) + " seq=" + std::to_string(o.seq),
                       "lower --seq, --batch, --hidden, --input, --layers or --requests");
  return o;
}

template <class F>
std::vector<double> time_requests(long n, F&& request) {
  request();  // warm-up
  std::vector<double> ms;
  ms.reserve(static_cast<size_t>(n));
  for (long i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    request();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms;
}

}  // namespace

int serve_bench(int argc, char** argv) {
  Options o;
  try {
    bool help = false;
    o = parse(argc, argv, &help);
    if (help) {
      std::cout << usage();
      return 0;
    }
  } catch (const UsageError& e) {
    return usage_error("serve-bench", e, kFlags, usage());
  }
  const Config config = Config::from_env();
  if (o.text_similarity) {
    check_config(config);
    warn_if_shared("serve-bench", config.cgroup_root, config.quiet);
    return serve_text_similarity(o.text, config);
  }
  if (o.impl == "corun") {  // the engine's settings and the plan cache's directory, before the model is made
    check_config(config);
    check_output_dir("CORUN_SERVE_PLANS", config.serve_plans);
  }
  warn_if_shared("serve-bench", config.cgroup_root, config.quiet);  // a p99 far above the median has a cause
  const serve::Model model = o.weights.empty() ? serve::Model::random(o.spec, static_cast<uint64_t>(o.seed))
                                               : serve::Model::load_npy(o.spec, o.weights);
  std::vector<float> x(static_cast<size_t>(o.seq) * o.batch * o.spec.input);
  std::mt19937_64 rng(static_cast<uint64_t>(o.seed) + 1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& v : x) v = u(rng);

  std::vector<double> ms;
  std::string plan, workers;
  if (o.impl == "corun") {
    Engine engine;
    serve::ServeOptions opt;
    opt.recalibrate = o.recalibrate;
    serve::Server server(engine, model, o.batch, o.seq, opt);
    plan = server.plan().str(o.spec.cell) + " (" + server.plan_source() + ")";
    workers = std::to_string(engine.info().workers) + " StarPU workers";
    if (o.candidates)
      for (const serve::Plan& c : server.candidates())
        std::printf("candidate: %s calibrated %.4f ms\n", c.str(o.spec.cell).c_str(), c.calibrated_ms);
    ms = time_requests(o.requests, [&] { server.infer(x, o.seq); });
  } else {
    const int cores = std::max(1, machine::allocation().workers);
    openblas_set_num_threads(cores);
    serve::BaselineRunner runner(model, o.batch, o.seq,
                                 o.impl == "gemms" ? serve::BaselineKind::gemms : serve::BaselineKind::fused);
    plan = o.impl == "gemms" ? "baseline: per step one OpenBLAS GEMM per gate and input"
                             : "baseline: per step one fused OpenBLAS GEMM";
    workers = "OpenBLAS " + std::to_string(cores) + " threads, no StarPU";
    ms = time_requests(o.requests, [&] { runner.run(x.data(), o.seq); });
  }
  const double median = ms[ms.size() / 2];
  const double p99 = ms[std::min(ms.size() - 1, static_cast<size_t>(0.99 * static_cast<double>(ms.size())))];
  const double flops = model.flops(o.batch, o.seq);
  std::printf("serve-bench: %s batch=%d seq=%d impl=%s (%s)\n", o.spec.str().c_str(), o.batch, o.seq, o.impl.c_str(),
              workers.c_str());
  std::printf("plan: %s\n", plan.c_str());
  std::printf("latency: median %.4f ms p99 %.4f ms over %ld requests; %.2f GFLOP/s (%.3f MFLOP per request)\n",
              median, p99, o.requests, flops / (median * 1e6), flops / 1e6);
  return 0;
}

}  // namespace corun::cli
