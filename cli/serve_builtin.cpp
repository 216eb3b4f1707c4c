#include "cli/serve_builtin.hpp"

#include "cli/args.hpp"

#include <corun/models/cnn.hpp>
#include <corun/models/lstm.hpp>
#include <corun/models/wide_deep.hpp>

#include <memory>

namespace corun::cli {

namespace {

// A built model's graph, its request inputs and its logits, owned together.
template <typename Model>
serve::ServedGraph served(std::shared_ptr<Model> m, std::vector<Tensor> inputs, std::vector<int64_t> limits) {
  serve::ServedGraph s;
  s.graph = &m->graph;
  s.inputs = std::move(inputs);
  s.index_limits = std::move(limits);
  s.outputs = {m->logits};
  s.output_names = {"logits"};
  s.owner = std::move(m);
  return s;
}

serve::GraphBuilder cnn_builder(const std::string& model, const std::string& size) {
  return [model, size](int rows) {
    models::CnnConfig cfg = model == "cifar-quick" ? models::cifar_quick_config()
                            : model == "pathnet"   ? models::pathnet_config(size)
                                                   : models::googlenet_config(size);
    cfg.batch = rows;
    auto m = std::make_shared<models::Cnn>(cfg, /*training=*/false);
    m->init_params();
    return served(m, {m->x}, {0});
  };
}

serve::GraphBuilder lstm_builder(const std::string& model, const std::string& size) {
  return [model, size](int rows) {
    models::LstmConfig cfg = models::lstm_config(size);
    cfg.input = cfg.hidden;
    cfg.phased = model == "phased-lstm";
    cfg.batch = rows;
    auto m = std::make_shared<models::Lstm>(cfg, /*training=*/false);
    m->init_params();
    std::vector<Tensor> inputs = m->x;
    inputs.insert(inputs.end(), m->times.begin(), m->times.end());
    return served(m, inputs, std::vector<int64_t>(inputs.size(), 0));
  };
}

serve::GraphBuilder wide_deep_builder() {
  return [](int rows) {
    models::WideDeepConfig cfg;
    cfg.batch = rows;
    auto m = std::make_shared<models::WideDeep>(cfg, /*training=*/false);
    m->init_params();
    return served(m, {m->categories, m->dense}, {cfg.vocab, 0});
  };
}

}  // namespace

const char* builtin_serving_models() {
  return "cifar-quick, pathnet[:SIZE], googlenet[:SIZE], lstm[:SIZE], phased-lstm[:SIZE], wide-deep (SIZE: small, "
         "medium or large)";
}

serve::GraphBuilder builtin_graph_builder(const std::string& spec) {
  const size_t colon = spec.find(':');
  const std::string model = spec.substr(0, colon);
  const std::string size = colon == std::string::npos ? "small" : spec.substr(colon + 1);
  const bool sized = model == "pathnet" || model == "googlenet" || model == "lstm" || model == "phased-lstm";
  if (size != "small" && size != "medium" && size != "large")
    throw UsageError("--model " + spec + ": the size must be small, medium or large", "--model");
  if (!sized && colon != std::string::npos)
    throw UsageError("--model " + spec + ": " + model + " has one size (drop ':" + size + "')", "--model");
  if (model == "cifar-quick" || model == "pathnet" || model == "googlenet") return cnn_builder(model, size);
  if (model == "lstm" || model == "phased-lstm") return lstm_builder(model, size);
  if (model == "wide-deep") return wide_deep_builder();
  throw UsageError("--model " + spec + ": unknown model; the built-in models: " + builtin_serving_models() +
                       " (an ONNX file: --onnx)",
                   "--model");
}

}  // namespace corun::cli
