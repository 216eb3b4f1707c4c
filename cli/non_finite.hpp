// cli/non_finite.hpp — NaN and infinity in `corun train`: refused in loaded parameters (unless
// --allow-non-finite), and a training step whose loss is not finite stops the run, naming the first value
// in graph order that is not finite (found only once the loss went bad, so a healthy run pays nothing).
#pragma once

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace corun::cli {

/// Index of the first NaN or infinity in `v`, or v.size() when every element is finite.
size_t first_non_finite(const std::vector<float>& v);

/// Throws corun::Error(invalid_argument) naming the parameter, the file, the element and its value when
/// `data` holds a NaN or an infinity: "'w0' in ck/w0.npy holds nan at element 17 ...".
void check_finite_parameter(const std::string& tensor, const std::string& file, const std::vector<float>& data);

/// After a step whose loss was not finite: the first value of `g` (in the order the graph created them:
/// inputs and parameters, then the forward ops, then the backward ones) holding a NaN or an infinity, as
/// "activation 'mm.l0.t3' (element 5 is nan)"; "" when none is found (the loss itself overflowed).
std::string first_non_finite_value(Engine& engine, Graph& g);

}  // namespace corun::cli
