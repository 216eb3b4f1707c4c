// corun/onnx.hpp — importing an ONNX model (torch.onnx.export, tf2onnx, ...) as a corun Graph.
//
//   corun::OnnxImportOptions opt;
//   opt.batch = 32;                     // pins a symbolic batch dimension (required when the file has one)
//   corun::Graph g = corun::import_onnx("mlp.onnx", opt);
//   corun::Tensor logits = g.find("logits");   // every ONNX graph output, under its own name
//
// Initializers become Graph::param values under their ONNX names (so --save/--load and checkpoints name
// their files after them), graph inputs become Graph::input values, every ONNX output is a kept value
// found by its ONNX name. Constant subgraphs computing shapes (Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape, as PyTorch exports x.view(x.size(0), -1)) are folded at import. Shapes are checked at import,
// against the Graph's shape rules and the file's value_info. An unsupported op, attribute value or opset is
// a corun::Error naming the node, the op_type, the opset and what is supported: never an approximation.
// docs/onnx.md lists the supported ops and attributes.
#pragma once

#include <corun/graph.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace corun {

/// How import_onnx turns the file into a graph.
struct OnnxImportOptions {
  /// 0: every input's first (batch) dimension comes from the file, and a symbolic or unknown one is an
  /// error. > 0: the batch size for a symbolic/unknown first dimension; an input whose file fixes another
  /// batch size is an error (the file's constants may depend on it).
  int batch = 0;
  /// The first extent of the data the caller holds for each input, by ONNX name (corun infer's --input
  /// files). With batch 0, a symbolic/unknown batch dimension takes its size from these (they must agree);
  /// with batch > 0, an entry for such an input that differs from batch is an error naming both.
  std::map<std::string, int64_t> input_batches;
  /// Appends softmax cross-entropy (Graph::softmax_xent) on the model's single output, which must be 2-D
  /// [batch, classes], against a new input named `targets_name` of the same shape (one-hot rows). The loss
  /// is the value named "loss"; Graph::backward(find("loss")) then makes the graph a training graph.
  bool add_training_loss = false;
  std::string targets_name = "targets";
  /// Imports for training: BatchNormalization nodes use the batch statistics and update their running
  /// mean/variance, which become Graph::state tensors initialised from the file's initializers (saved and
  /// restored with the parameters). false: inference mode, the running statistics normalise (also state
  /// tensors, never parameters). corun train --onnx sets it; a node with training_mode = 1 trains either way.
  bool training = false;
  /// false: an initializer holding NaN or inf is an error naming it (corun::Error invalid_argument), as a
  /// parameter file is for `corun train --load`; true (--allow-non-finite) imports it as it is.
  bool allow_non_finite = false;
};

/// What the import made of the file, besides the graph.
struct OnnxModel {
  Graph graph;
  std::vector<Tensor> inputs;             ///< the ONNX graph inputs (initializers excluded), in file order
  /// Per input, in the same order: 0 for a FLOAT input. An INT64/INT32 input (token ids) is held as exact
  /// integers in f32; its entry is the number of valid ids (the smallest row count of the tables that Gather
  /// nodes index with it directly), or -1 when no Gather reads it directly.
  std::vector<int64_t> index_limits;
  std::vector<std::string> output_names;  ///< the ONNX graph outputs' names, in file order
  std::vector<Tensor> outputs;            ///< their values (Graph::find(name) finds them too)
  Tensor targets;                         ///< with add_training_loss: the one-hot targets input
  Tensor loss;                            ///< with add_training_loss: the [1] loss
  int opset = 0;                          ///< the file's default-domain opset
};

/// Reads the ONNX file at `path` (external data files are read from its directory) into a graph.
/// External data must be a regular file inside that directory: an absolute location, one with '..' or a
/// symbolic link out of it is refused, as ONNX's checker does, and so are offsets and lengths past the file.
/// Throws corun::Error: io_error for a missing, truncated or non-ONNX file or missing, escaping or short
/// external data, invalid_argument for an unsupported opset, op, attribute, a shape that does not fit or
/// (without allow_non_finite) an initializer holding NaN or inf.
OnnxModel import_onnx_model(const std::string& path, const OnnxImportOptions& options = {});
/// The same, the graph only (outputs: Graph::find with their ONNX names).
Graph import_onnx(const std::string& path, const OnnxImportOptions& options = {});

/// A trained tensor for save_onnx_model: the Graph value's name (onnx_value_name of its initializer's name)
/// and its values, in the initializer's (row-major) element order.
struct OnnxTrainedTensor {
  std::string name;
  std::vector<float> values;
};

/// Writes the model of the ONNX file `source_path` to `out_path` with trained values (`corun train --onnx IN
/// --save-onnx OUT`): the same graph, nodes, inputs, outputs and metadata, and every initializer named in
/// `trained` (the parameters, and BatchNormalization's running statistics) holding its values, in its own
/// element type (FLOAT, or DOUBLE), as raw data inside the file. An Identity node over an initializer whose
/// output the import made a parameter of its own (torch.onnx.export's merged duplicates) gives way to an
/// initializer under that output's name holding its trained values. Initializers stored as external data are
/// written inside the file too, so that it stands alone wherever it is written. The write is atomic
/// (write_file_atomically: a temporary file beside `out_path`, renamed over it), so `out_path` may be
/// `source_path` itself.
/// Throws corun::Error, having written nothing: invalid_argument when a trained tensor has no initializer of
/// its name in the file, or another element count (the tensors named), or the file would be over protobuf's
/// 2 GiB limit; io_error when the source cannot be read or the target cannot be written.
void save_onnx_model(const std::string& source_path, const std::string& out_path,
                     const std::vector<OnnxTrainedTensor>& trained);

/// The name a Graph value gets for the ONNX name `onnx_name`: the same, except that characters a file name
/// cannot hold ('/', '\\', NUL) become '_' and a name starting with '.' gets a leading '_' (parameters are
/// saved as <name>.npy). Two ONNX names that map to one corun name are an error at import.
std::string onnx_value_name(const std::string& onnx_name);

}  // namespace corun
