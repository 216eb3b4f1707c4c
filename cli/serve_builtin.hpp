// cli/serve_builtin.hpp — `corun serve --model NAME[:SIZE]`: the built-in models of `corun infer --model` as graph
// builders for the model server (serve/endpoint/model_server.hpp). Each bucket's graph is built with the same
// seeded parameters, so every batch size serves one model.
#pragma once

#include "serve/endpoint/model_server.hpp"

#include <string>

namespace corun::cli {

/// The names --model takes, for usage text and errors.
const char* builtin_serving_models();

/// "pathnet", "googlenet:medium", "lstm:small", "phased-lstm", "cifar-quick", "wide-deep" (SIZE: small, medium
/// or large where the model has sizes; default small). The graph's inputs but the training targets are the
/// request's inputs (wide-deep's categories as INT64 ids below its vocabulary); its output is "logits".
/// Throws UsageError for an unknown name or size.
serve::GraphBuilder builtin_graph_builder(const std::string& spec);

}  // namespace corun::cli
