// onnx/ops/rnn.hpp — the converters of rnn.cpp: LSTM, GRU. onnx/ops/registry.cpp lists them by op_type.
#pragma once

#include "onnx/convert.hpp"

namespace corun::onnx_import {

void convert_lstm(Converter& c);
void convert_gru(Converter& c);

}  // namespace corun::onnx_import
