// graphs/ops/normalisation.hpp — what batch_norm and layer_norm share: their three outputs (Y, the saved mean,
// the saved invstd) and the backward rule over them. Both kernels take the same grad buffers: X, scale, mean,
// invstd, dY -> dX, dscale, dbias.
#pragma once

#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

#include <string>
#include <vector>

namespace corun::graphs {

/// The backward rule of a normalisation op whose inputs are X, scale, bias, ... and whose outputs, from buffer
/// `first_output` on, are Y, mean, invstd. Adds one `grad_kind` node giving dX, dscale and dbias (their value
/// names end in `name_suffix`, e.g. ".bn"); the saved mean and invstd have no gradient rule, so a loss that
/// depends on them is an error naming `op` and the node.
void normalisation_backward(GradContext& ctx, codelets::OpKind grad_kind, const char* op, int first_output,
                            const char* name_suffix);

/// Names the outputs of normalisation node `node` (Y, mean, invstd) `node`, `node.mean` and `node.invstd`, each
/// findable by that name unless the name is taken.
void name_normalisation_outputs(detail::GraphImpl& g, const std::vector<Tensor>& outs, const std::string& node);

}  // namespace corun::graphs
