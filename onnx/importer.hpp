// onnx/importer.hpp — the importer's entry for a ModelProto already in memory (the unit tests build one in
// C++; import_onnx_model parses the file and calls it).
#pragma once

#include <corun/onnx.hpp>

#include <onnx/onnx_pb.h>

#include <string>

namespace corun::onnx_import {

/// Lowest and highest default-domain opset the converters implement.
inline constexpr int kMinOpset = 11;
inline constexpr int kMaxOpset = 17;

/// `base_dir`: the directory external data locations are relative to. `source`: the file, for messages.
OnnxModel import_model(const onnx::ModelProto& model, const std::string& base_dir, const std::string& source,
                       const OnnxImportOptions& options);

}  // namespace corun::onnx_import
