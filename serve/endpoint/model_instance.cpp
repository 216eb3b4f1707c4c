#include "serve/endpoint/model_instance.hpp"

#include "serve/endpoint/model_server.hpp"

#include <corun/engine.hpp>
#include <corun/error.hpp>
#include <corun/onnx.hpp>

#include "base/check.hpp"

#include <algorithm>
#include <cstring>

namespace corun::serve {

namespace {

// A signature tensor: the batch axis (the first) as -1 when requests choose their rows.
TensorSpec spec_of(const std::string& name, const Shape& shape, bool dynamic_rows) {
  TensorSpec s;
  s.name = name;
  for (int d = 0; d < shape.rank; ++d) s.shape.push_back(d == 0 && dynamic_rows ? -1 : shape[d]);
  return s;
}

// The signature of a model built at `rows` rows. Every input and output must be batch-major: requests are
// stacked along the first dimension and cut out of it.
// `rows` 0: the model is served unbatched (its shapes exactly, no check).
ModelMetadata metadata_of(const ServedGraph& m, const std::string& name, int rows, bool dynamic_rows) {
  ModelMetadata meta;
  meta.name = name;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const Shape& shape = m.inputs[i].shape();
    TensorSpec s = spec_of(m.inputs[i].name(), shape, dynamic_rows);
    CORUN_CHECK(rows == 0 || (shape.rank >= 1 && shape[0] == rows), Status::invalid_argument,
                "model '" << name << "': input '" << s.name << "' " << shape.str() << " has no batch axis first ("
                          << rows << " rows): corun serve batches requests along it");
    if (m.index_limits[i] != 0) {
      s.datatype = "INT64";
      s.index_limit = m.index_limits[i];
    }
    meta.inputs.push_back(std::move(s));
  }
  for (size_t k = 0; k < m.outputs.size(); ++k) {
    const Shape& shape = m.outputs[k].shape();
    CORUN_CHECK(rows == 0 || (shape.rank >= 1 && shape[0] == rows), Status::invalid_argument,
                "model '" << name << "': output '" << m.output_names[k] << "' " << shape.str()
                          << " does not have the batch (" << rows << " rows) as its first dimension, so a "
                             "request's rows cannot be cut out of it: corun serve serves models whose outputs "
                             "are batch-major");
    meta.outputs.push_back(spec_of(m.output_names[k], shape, dynamic_rows));
  }
  return meta;
}

// Whether every input and output has `rows` as its first dimension.
bool batch_major(const ServedGraph& m, int rows) {
  auto leads = [rows](const Tensor& t) { return t.shape().rank >= 1 && t.shape()[0] == rows; };
  return std::all_of(m.inputs.begin(), m.inputs.end(), leads) && std::all_of(m.outputs.begin(), m.outputs.end(), leads);
}

ServedGraph served(OnnxModel m) {
  auto owner = std::make_shared<OnnxModel>(std::move(m));
  ServedGraph g;
  g.graph = &owner->graph;
  g.inputs = owner->inputs;
  g.index_limits = owner->index_limits;
  g.outputs = owner->outputs;
  g.output_names = owner->output_names;
  g.owner = std::move(owner);
  return g;
}

std::vector<int> buckets_up_to(int max_batch) {
  std::vector<int> buckets;
  for (int b = 1; b < max_batch; b *= 2) buckets.push_back(b);
  buckets.push_back(max_batch);
  return buckets;
}

int64_t row_numel(const Shape& shape) { return shape.rank <= 1 ? 1 : shape.numel() / shape[0]; }

}  // namespace

int ModelSource::bucket_for(int rows) const {
  for (int b : buckets)
    if (b >= rows) return b;
  return buckets.back();
}

// A file that fixes its batch imports with batch 0; one with a symbolic batch needs a batch size, and its
// batch-0 error is then not the user's problem.
ModelSource ModelSource::from_onnx(const std::string& path, const std::string& name, const ServerOptions& options) {
  OnnxImportOptions import;
  import.allow_non_finite = options.allow_non_finite;
  ModelSource src;
  ServedGraph first;
  try {
    first = served(import_onnx_model(path, import));
    const Shape& in = first.inputs.empty() ? Shape{} : first.inputs[0].shape();
    src.fixed_batch = in.rank == 0 ? 1 : static_cast<int>(in[0]);
  } catch (const Error&) {
    OnnxImportOptions one = import;
    one.batch = 1;
    first = served(import_onnx_model(path, one));  // a real error of the file is thrown here
  }
  const bool fixed = src.fixed_batch > 0;
  src.build = [path, import, fixed](int rows) {  // a fixed file keeps its own shapes at every bucket
    OnnxImportOptions o = import;
    o.batch = fixed ? 0 : rows;
    return served(import_onnx_model(path, o));
  };
  if (fixed && !batch_major(first, src.fixed_batch)) {  // fixed shapes, no common batch axis: unbatched
    src.metadata = metadata_of(first, name, 0, false);
    src.metadata.batched = false;
    src.metadata.max_batch = 1;
    src.buckets = {1};
    return src;
  }
  src.metadata = metadata_of(first, name, fixed ? src.fixed_batch : 1, !fixed);
  src.metadata.max_batch = fixed ? std::min(src.fixed_batch, options.max_batch) : options.max_batch;
  src.buckets = fixed ? std::vector<int>{src.fixed_batch} : buckets_up_to(options.max_batch);
  return src;
}

ModelSource ModelSource::from_builder(const std::string& name, GraphBuilder build, const ServerOptions& options) {
  ModelSource src;
  src.metadata = metadata_of(build(1), name, 1, true);
  src.metadata.max_batch = options.max_batch;
  src.buckets = buckets_up_to(options.max_batch);
  src.build = std::move(build);
  return src;
}

ModelInstance::ModelInstance(const ModelSource& source, int rows)
    : source_(source), model_(source.build(rows)), rows_(rows) {
  for (const Tensor& t : model_.inputs) staging_.emplace_back(static_cast<size_t>(t.shape().numel()), 0.0f);
}

void ModelInstance::warm_up(Engine& engine) {
  for (size_t i = 0; i < model_.inputs.size(); ++i) {
    std::fill(staging_[i].begin(), staging_[i].end(), 0.0f);
    engine.write(*model_.graph, model_.inputs[i], staging_[i]);
  }
  RunTicket t = engine.submit(*model_.graph);
  engine.wait(t);
  warm_ = true;
}

std::vector<std::vector<RequestTensor>> ModelInstance::run(Engine& engine, const Batch& batch) {
  for (size_t i = 0; i < model_.inputs.size(); ++i) {
    size_t at = 0;
    for (const PendingRequest& r : batch.requests) {
      const std::vector<float>& data = r.inputs[i].data;
      std::memcpy(staging_[i].data() + at, data.data(), data.size() * sizeof(float));
      at += data.size();
    }
    std::fill(staging_[i].begin() + static_cast<std::ptrdiff_t>(at), staging_[i].end(), 0.0f);  // the padding rows
    engine.write(*model_.graph, model_.inputs[i], staging_[i]);
  }
  RunTicket ticket = engine.submit(*model_.graph, {.priority = batch.priority});
  engine.wait(ticket);
  std::vector<std::vector<RequestTensor>> out(batch.requests.size());
  for (size_t k = 0; k < model_.outputs.size(); ++k) {
    const std::vector<float> y = engine.read(*model_.graph, model_.outputs[k]);
    const Shape& shape = model_.outputs[k].shape();
    const size_t row = static_cast<size_t>(row_numel(shape));
    size_t at = 0;
    const bool batched = source_.metadata.batched;
    for (size_t r = 0; r < batch.requests.size(); ++r) {
      RequestTensor t;
      t.name = source_.metadata.outputs[k].name;
      t.shape = source_.metadata.outputs[k].shape;
      if (batched) t.shape[0] = batch.requests[r].rows;
      const size_t n = batched ? static_cast<size_t>(batch.requests[r].rows) * row : y.size();
      t.data.assign(y.begin() + static_cast<std::ptrdiff_t>(at), y.begin() + static_cast<std::ptrdiff_t>(at + n));
      at += n;
      out[r].push_back(std::move(t));
    }
  }
  return out;
}

void ModelInstance::release(Engine& engine) { engine.release(*model_.graph); }

}  // namespace corun::serve
