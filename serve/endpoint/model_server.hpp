// serve/endpoint/model_server.hpp — one served model on the process's Engine: a bounded request queue, dynamic
// batching and batches that co-run on the engine's cores (docs/serving-endpoint.md).
//
//   corun::Engine engine(config);
//   auto model = corun::serve::ModelServer::from_onnx(engine, "resnet18.onnx", "resnet18", options);
//   std::future<InferResult> r = model->infer(inputs, /*priority*/ false);
//   ...
//   model->drain();   // SIGTERM: refuse new requests, finish the queued and running ones
//
// Runners (threads, at most ServerOptions::max_in_flight of them per model) each take the next batch from the
// queue: the requests waiting, merged up to max_batch rows, waiting at most max_queue_delay_us for more once the
// first arrives. A runner writes the batch into a graph instance of the smallest bucket (1, 2, 4, ... max_batch
// rows) that holds it, padding the other rows with zeros, and runs it with Engine::submit/wait, so several
// batches (of this model and of others) are in flight at once and the policy places their ops on the cores
// together. At low load one batch runs at a time and gets every core; at high load the queue grows, runners
// take bigger batches and more of them run at once. Destroy every ModelServer before the Engine.
#pragma once

#include "serve/endpoint/model_backend.hpp"

#include <corun/graph.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace corun {
class Engine;
}  // namespace corun

namespace corun::serve {

/// A served model's graph at one batch size: what ModelInstance writes, runs and reads.
struct ServedGraph {
  std::shared_ptr<void> owner;  ///< keeps the graph (and whatever holds it) alive
  Graph* graph = nullptr;
  /// The inputs a request gives, in signature order; the graph's other inputs keep their values.
  std::vector<Tensor> inputs;
  /// Per input: 0 for FP32, else token ids held as exact integers in f32: the count of valid ids, or -1 when
  /// no table bounds them (as OnnxModel::index_limits).
  std::vector<int64_t> index_limits;
  std::vector<Tensor> outputs;
  std::vector<std::string> output_names;
};
/// Builds the model's graph for a batch of `rows` rows (the first dimension of every input and output).
using GraphBuilder = std::function<ServedGraph(int rows)>;

struct ServerOptions {
  int max_batch = 8;              ///< --max-batch: rows of one merged batch (and of one request)
  long max_queue_delay_us = 500;  ///< --max-queue-delay-us: how long a batch waits for more requests
  int max_queue = 256;            ///< --max-queue: requests waiting; one more is Overloaded (503)
  int max_in_flight = 0;          ///< batches of this model running at once (0: the engine's workers)
  bool allow_non_finite = false;  ///< import initializers holding NaN or inf (corun infer's flag)
};

class ModelServer : public ModelBackend {
 public:
  /// Imports `onnx_path` (at each bucket's batch size as runners need it; the first bucket now, so a bad model
  /// fails here) and starts the runners. Throws corun::Error for a model corun cannot import or a bad option.
  static std::unique_ptr<ModelServer> from_onnx(Engine& engine, const std::string& onnx_path, const std::string& name,
                                                const ServerOptions& options);
  /// A model given as a graph builder (corun serve --model: the built-in models), batch dynamic.
  static std::unique_ptr<ModelServer> from_graphs(Engine& engine, const std::string& name, GraphBuilder build,
                                                  const ServerOptions& options);
  ~ModelServer() override;

  /// Refuses new requests (Overloaded, "draining") and returns once every queued and running one finished.
  virtual void drain() = 0;
};

}  // namespace corun::serve
