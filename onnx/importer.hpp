// onnx/importer.hpp — the importer's entry for a ModelProto already in memory (the unit tests build one in
// C++; import_onnx_model parses the file and calls it), and the file reading it shares with save_onnx_model.
#pragma once

#include <corun/onnx.hpp>

#include <onnx/onnx_pb.h>

#include <string>

namespace corun::onnx_import {

/// Lowest and highest default-domain opset the converters implement.
inline constexpr int kMinOpset = 11;
inline constexpr int kMaxOpset = 17;

/// The ModelProto in the file at `path`. Throws corun::Error(io_error) for a missing, empty or damaged file, or
/// one that is not an ONNX model.
onnx::ModelProto read_model_file(const std::string& path);
/// The folder external data locations of the model file at `path` are relative to ("." for a bare name).
std::string model_folder(const std::string& path);

/// `base_dir`: the directory external data locations are relative to. `source`: the file, for messages.
OnnxModel import_model(const onnx::ModelProto& model, const std::string& base_dir, const std::string& source,
                       const OnnxImportOptions& options);

}  // namespace corun::onnx_import
