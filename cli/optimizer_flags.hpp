// cli/optimizer_flags.hpp — the optimizer and learning-rate schedule flags every `corun train` model takes
// (issue 19): --optimizer sgd|momentum|adam|adamw, --momentum, --nesterov, --weight-decay, --beta1, --beta2,
// --eps, --lr-schedule, --warmup. Each model keeps its defaults (CNNs: momentum 0.9; LSTMs and wide-deep:
// plain SGD); a flag that does not fit the optimizer is a usage error, said before anything is built.
#pragma once

#include "cli/args.hpp"
#include "cli/checkpoint.hpp"

#include "base/json.hpp"
#include "cli/lr_schedule.hpp"

#include <corun/engine.hpp>
#include <corun/graph.hpp>

#include <string>
#include <vector>

namespace corun::cli {

struct OptimizerChoice {
  std::string name = "sgd";  ///< sgd | momentum | adam | adamw
  float momentum = 0.0f;     ///< sgd / momentum (0 for adam, adamw)
  /// optimizer, weight_decay, nesterov, beta1, beta2, eps (the model config's BackwardOptions optimizer).
  BackwardOptions options{};
  LrSchedule schedule{};     ///< with the warm-up
  bool model_default = true; ///< the model's own optimizer and settings: identities keep their old entries
  /// "sgd", "sgd_momentum", "sgd_wd", "adam" or "adamw": what the update nodes are (checkpoint manifests).
  std::string kind() const;
};

/// The flags (for `corun train --help`; --momentum and --warmup included).
std::vector<FlagSpec> optimizer_flags();
/// The choice the flags make for a model whose defaults are `model_momentum` (> 0: SGD with momentum) and
/// `model_warmup`. Throws UsageError naming the flag for a bad value or a flag that does not fit.
OptimizerChoice optimizer_from(const Args& args, float model_momentum, int model_warmup);
/// Appends what a checkpoint must match (optimizer, its hyper-parameters, the schedule) to `id`; nothing
/// for the model's default optimizer, so checkpoints written before these flags still resume. An entry `id`
/// already has (the CNNs' momentum, warmup) is not repeated. A cosine schedule's length is the run's
/// `run_iters`, so it is part of the entry: resuming with another --iters would bend the curve.
void add_optimizer_identity(const OptimizerChoice& choice, long run_iters, RunIdentity& id);
/// The optimizer, its settings and the learning-rate schedule, for --json's "config": what a run used, the
/// model's default included (a result file must say how the loss it reports was reached).
json::Value optimizer_json(const OptimizerChoice& choice);
/// " optimizer=adam wd=0.01 schedule=cosine:0" for titles ("" for the model's default).
std::string optimizer_note(const OptimizerChoice& choice);
/// Before step k (0-based) of a `total`-iteration run: the scheduled rate, written where the root graph's
/// update nodes read it (the hyper-parameter tensor; the sgd nodes' rate unless `replicated`, where
/// Engine::run_replicated takes the returned rate). With a constant rate and no hyper tensor nothing is
/// touched, so plain SGD and momentum runs keep their bits.
float apply_learning_rate(Engine& engine, Graph& root, const OptimizerChoice& choice, float base, uint64_t k,
                          long total, bool replicated);

}  // namespace corun::cli
