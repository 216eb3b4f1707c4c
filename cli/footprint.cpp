#include "cli/footprint.hpp"

#include "base/check.hpp"
#include "base/memory_budget.hpp"

#include <cstdio>

namespace corun::cli {

namespace {

// A graph node costs more than its tensors: its name, inputs, outputs and the hints the policies read.
// 128 bytes is below what a node of the LSTM holds (measured with the unit test's graphs).
constexpr double kBytesPerNode = 128;

}  // namespace

Footprint lstm_footprint(const models::LstmConfig& c, bool training) {
  // Doubles throughout: the product of four flags capped at 1e9 each overflows every integer type.
  const double L = c.layers, S = c.seq, B = c.batch, H = c.hidden, I = c.input;
  // Per layer and step, forward: xh [B, in+H], the matmul and gates [B, 4H], h and c [B, H]: 12 BH; the
  // backward pass holds as much again. 16 BH is below that (the count of the fused cell, which holds least).
  // Inference: the forward's xh [B, >= 2H], gates [B, 4H] and h, c [B, H] of the fused cell, 8 BH at least.
  double activations = L * S * B * H * (training ? 16.0 : 8.0) + S * B * I;
  // The backward's stacked weight-gradient operands (BackwardOptions::stack_weight_gradient_rows): copies of
  // xh [B, >= 2H] and of the gates' gradient [B, 4H] of at least every step but one.
  if (training && c.optimizer.stack_weight_gradient_rows > B && S > 1) activations += L * (S - 1.0) * B * H * 6.0;
  // Weights [in+H, 4H] and biases of every layer, and their gradients.
  double weights = (training ? 2.0 : 1.0) * (L * (2.0 * H * 4.0 * H + 4.0 * H) + H * c.classes);
  // The backward's transposed copy of each layer's weight (BackwardOptions::transpose_reused_weight_uses).
  const double uses = static_cast<double>(c.optimizer.transpose_reused_weight_uses);
  if (training && uses > 0 && S >= uses) weights += L * 2.0 * H * 4.0 * H;
  Footprint f;
  // Fused cell: at least concat, matmul, add and the cell forward, and as many backward.
  f.tasks = L * S * (training ? 8.0 : 4.0);
  f.bytes = 4.0 * (activations + weights) + f.tasks * kBytesPerNode;
  return f;
}

Footprint cnn_footprint(const models::CnnConfig& c, bool training) {
  const double input = static_cast<double>(c.batch) * c.channels * c.image * c.image;
  Footprint f;
  f.tasks = (training ? 4.0 : 1.0) * (c.kind == models::CnnKind::pathnet ? c.layers * c.modules : 4);
  f.bytes = 4.0 * 2.0 * input + f.tasks * kBytesPerNode;  // the input batch and a first activation its size
  return f;
}

Footprint wide_deep_footprint(const models::WideDeepConfig& c) {
  const double B = c.batch, F = c.categorical;
  double hidden = 0;
  for (int h : c.hidden) hidden += h;
  Footprint f;
  f.tasks = F + 2.0 * static_cast<double>(c.hidden.size());  // an embedding per table, a matmul and add per layer
  const double tensors = B * (F + c.dense + F * c.embed_dim + hidden) + F * c.vocab * static_cast<double>(c.embed_dim);
  f.bytes = 4.0 * tensors + f.tasks * kBytesPerNode;
  return f;
}

Footprint text_similarity_footprint(const models::TextSimilarityConfig& c) {
  const double B = c.batch, E = c.embed, H = c.hidden;
  // Per sentence: the ids [len, batch], their embeddings [len * batch, E] and per direction the GRU's input
  // projection [len * batch, 3H] and a state [batch, H] per step.
  const double per_token = 1.0 + E + 2.0 * (3.0 * H + H);
  const double tokens = static_cast<double>(c.source_len + c.target_len) * B;
  Footprint f;
  f.tasks = 4.0 * static_cast<double>(c.source_len + c.target_len);  // per step and direction a matmul and a cell
  const double weights = static_cast<double>(c.vocab) * E + 2.0 * (3.0 * H * E + 3.0 * H * H);
  f.bytes = 4.0 * (tokens * per_token + weights) + f.tasks * kBytesPerNode;
  return f;
}

Footprint serve_rnn_footprint(const serve::ModelSpec& spec, int batch, int seq) {
  const double B = batch, S = seq, H = spec.hidden, D = spec.directions();
  const double gates = spec.cell == serve::Cell::lstm ? 4.0 : 3.0;
  double weights = 0;
  for (int l = 0; l < spec.layers; ++l) weights += D * gates * H * (spec.layer_input(l) + H);
  Footprint f;
  f.tasks = S * spec.layers * D;  // one cell step per timestep, layer and direction
  f.bytes = 4.0 * (S * B * spec.input + weights + S * B * H * D);
  return f;
}

void check_fits(const Footprint& f, const std::string& flags, const std::string& shape, double available_bytes,
                const std::string& available_source, const std::string& lower_hint) {
  if (f.bytes <= available_bytes) return;
  char tasks[32];
  std::snprintf(tasks, sizeof tasks, "%.3g", f.tasks);
  detail::fail(Status::invalid_config, (flags.empty() ? std::string("this model") : flags) + " asks for at least " +
                                           human_bytes(f.bytes) + " of tensors (" + shape + ", at least " + tasks +
                                           " tasks per iteration), more than the " + human_bytes(available_bytes) +
                                           " available (" + available_source + "); " + lower_hint);
}

void check_fits_in_memory(const Footprint& f, const std::string& flags, const std::string& shape,
                          const std::string& lower_hint) {
  const MemoryBudget m = memory_budget();
  check_fits(f, flags, shape, m.bytes, m.source, lower_hint);
}

}  // namespace corun::cli
