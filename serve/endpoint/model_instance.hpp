// serve/endpoint/model_instance.hpp — a served model: its graph builder and signature (ModelSource) and the graph
// instances runners run batches on (ModelInstance, one per runner and bucket).
//
// Batches are padded to buckets of 1, 2, 4, ... rows up to max_batch (the last bucket is max_batch itself), so
// that a runner needs a handful of graphs, not one per batch size. A model whose file fixes its batch size B has
// the one bucket B. Padding and merging assume that rows do not mix, as in every classification and
// embedding model in inference mode; a row's numbers can still differ in the last bits between buckets where a
// kernel blocks its work by the batch size (docs/serving-endpoint.md).
#pragma once

#include "serve/endpoint/model_backend.hpp"
#include "serve/endpoint/model_server.hpp"
#include "serve/endpoint/request_queue.hpp"

#include <string>
#include <vector>

namespace corun::serve {

struct ModelSource {
  GraphBuilder build;         ///< the model's graph at a bucket's rows
  ModelMetadata metadata;
  int fixed_batch = 0;        ///< the model fixes the batch size: its only bucket (0: the batch axis is dynamic)
  std::vector<int> buckets;   ///< ascending; the last one is metadata.max_batch

  /// The smallest bucket that holds `rows` (1 <= rows <= max_batch).
  int bucket_for(int rows) const;

  /// Imports the file once to learn its signature. Throws corun::Error for a file corun cannot import, or
  /// inputs and outputs whose first dimension is not the batch.
  static ModelSource from_onnx(const std::string& path, const std::string& name, const ServerOptions& options);
  /// A model whose batch is dynamic, built by `build` (one graph to learn the signature now).
  static ModelSource from_builder(const std::string& name, GraphBuilder build, const ServerOptions& options);
};

class ModelInstance {
 public:
  ModelInstance(const ModelSource& source, int rows);
  ModelInstance(const ModelInstance&) = delete;
  ModelInstance& operator=(const ModelInstance&) = delete;

  bool warm() const { return warm_; }
  /// One run on zeros: binds the graph (the plan step's passes), and the kernels' first calls (oneDNN's JIT,
  /// first touches) happen before any request waits on them.
  void warm_up(Engine& engine);
  /// Writes the batch's rows (the rest of the bucket zeros), runs the graph and returns each request's rows
  /// of every output, in the batch's request order.
  std::vector<std::vector<RequestTensor>> run(Engine& engine, const Batch& batch);
  /// Gives the graph back from the engine (before the instance or the engine dies).
  void release(Engine& engine);

 private:
  const ModelSource& source_;
  ServedGraph model_;
  int rows_ = 0;
  std::vector<std::vector<float>> staging_;  // per input: the bucket's rows, written once per batch
  bool warm_ = false;
};

}  // namespace corun::serve
