#include "cli/optimizer_flags.hpp"

#include "cli/sessions/sessions.hpp"
#include "cli/train_session.hpp"

#include "base/parse.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace corun::cli {
namespace {

// BackwardOptions' default, which corun train keeps unless --weight-grad-rows says otherwise.
constexpr long kDefaultWeightGradRows = static_cast<long>(BackwardOptions{}.stack_weight_gradient_rows);
constexpr long kDefaultTransposeUses = static_cast<long>(BackwardOptions{}.transpose_reused_weight_uses);

// A number in [lo, hi) (hi_open) or [lo, hi]; the message names the flag and the range.
float ranged(const Args& args, const std::string& flag, float fallback, double lo, double hi, bool hi_open,
             const std::string& range) {
  if (!args.has(flag)) return fallback;
  const std::string text = args.str(flag, "");
  const auto v = parse::real(text);
  if (!v || !(*v >= lo) || (hi_open ? !(*v < hi) : !(*v <= hi)))
    throw UsageError(flag + " must be a number in " + range + ", got '" + text + "'");
  return static_cast<float>(*v);
}

}  // namespace

std::string OptimizerChoice::kind() const {
  if (name == "adam" || name == "adamw") return name;
  if (options.weight_decay != 0.0f || options.nesterov) return "sgd_wd";
  return momentum > 0.0f ? "sgd_momentum" : "sgd";
}

std::vector<FlagSpec> optimizer_flags() {
  return {
      {"--optimizer", true,
       "sgd | momentum | adam | adamw (PyTorch semantics; default: momentum for cifar-quick, pathnet, googlenet, "
       "sgd for the others)"},
      {"--momentum", true, "sgd, momentum: SGD momentum in [0, 1) (default 0.9 with momentum; sets momentum)"},
      {"--nesterov", false, "sgd, momentum: Nesterov momentum (needs momentum > 0)"},
      {"--weight-decay", true,
       "L2 weight decay >= 0 (sgd, momentum, adam: added to the gradient; adamw: decoupled; default 0)"},
      {"--beta1", true, "adam, adamw: first-moment decay in [0, 1) (default 0.9)"},
      {"--beta2", true, "adam, adamw: second-moment decay in [0, 1) (default 0.999)"},
      {"--eps", true, "adam, adamw: added outside the square root, > 0 (default 1e-8)"},
      {"--lr-schedule", true,
       "constant | step:N:GAMMA (x GAMMA every N iterations) | cosine[:FLOOR] (to FLOOR at the last iteration); "
       "default constant"},
      {"--warmup", true,
       "iterations of linear learning-rate warm-up before the schedule (0: none; default googlenet 20, others 0)"},
      {"--weight-grad-rows", true,
       "a parameter's per-step gradient products (an RNN weight's over its time steps) stacked into products "
       "of at least N rows (default 256; 0: one product per step, the bits of earlier versions)"},
      {"--weight-transpose-uses", true,
       "a weight read by at least N products (an RNN weight, once per time step) is transposed once per "
       "iteration for its input gradients (default 8; 0: never, the bits of earlier versions)"},
  };
}

OptimizerChoice optimizer_from(const Args& args, float model_momentum, int model_warmup) {
  OptimizerChoice c;
  const std::string default_name = model_momentum > 0.0f ? "momentum" : "sgd";
  c.name = args.str("--optimizer", default_name);
  if (c.name != "sgd" && c.name != "momentum" && c.name != "adam" && c.name != "adamw")
    throw UsageError("--optimizer must be sgd, momentum, adam or adamw, got '" + c.name + "'");
  const bool adam = c.name == "adam" || c.name == "adamw";
  for (const char* flag : {"--momentum", "--nesterov"})
    if (adam && args.has(flag))
      throw UsageError(std::string(flag) + " applies to --optimizer sgd or momentum, not " + c.name +
                       " (Adam's first-moment decay is --beta1)");
  for (const char* flag : {"--beta1", "--beta2", "--eps"})
    if (!adam && args.has(flag))
      throw UsageError(std::string(flag) + " applies to --optimizer adam or adamw, not " + c.name);
  if (!adam) {
    const float fallback = c.name == "momentum" ? (model_momentum > 0.0f ? model_momentum : 0.9f) : 0.0f;
    c.momentum = ranged(args, "--momentum", fallback, 0.0, 1.0, true, "[0, 1)");
    if (args.has("--momentum") && c.momentum > 0.0f) c.name = "momentum";
    c.options.nesterov = args.has("--nesterov");
    if (c.options.nesterov && c.momentum <= 0.0f)
      throw UsageError("--nesterov needs momentum > 0 (--optimizer momentum, or --momentum M)");
  }
  c.options.optimizer = c.name == "adam" ? Optimizer::adam : c.name == "adamw" ? Optimizer::adamw : Optimizer::sgd;
  c.options.weight_decay = ranged(args, "--weight-decay", 0.0f, 0.0, 1e9, false, "[0, 1e9]");
  c.options.beta1 = ranged(args, "--beta1", 0.9f, 0.0, 1.0, true, "[0, 1)");
  c.options.beta2 = ranged(args, "--beta2", 0.999f, 0.0, 1.0, true, "[0, 1)");
  if (args.has("--eps")) c.options.eps = static_cast<float>(args.positive_real("--eps", 1e-8));
  try {
    c.schedule = LrSchedule::parse(args.str("--lr-schedule", "constant"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what(), "--lr-schedule");
  }
  c.schedule.warmup = model_warmup;
  if (args.has("--warmup")) {  // 0 is allowed: no warm-up
    const std::string w = args.str("--warmup", "");
    char* end = nullptr;
    const long v = std::strtol(w.c_str(), &end, 10);
    if (w.empty() || *end != '\0' || v < 0 || v > 1000000)
      throw UsageError("--warmup must be a whole number of iterations >= 0, got '" + w + "'");
    c.schedule.warmup = v;
  }
  c.options.stack_weight_gradient_rows = args.non_negative("--weight-grad-rows", kDefaultWeightGradRows);
  c.options.transpose_reused_weight_uses = args.non_negative("--weight-transpose-uses", kDefaultTransposeUses);
  c.model_default = c.name == default_name && c.options.weight_decay == 0.0f && !c.options.nesterov &&
                    c.schedule.kind == LrSchedule::Kind::constant;
  return c;
}

void add_optimizer_identity(const OptimizerChoice& c, long run_iters, RunIdentity& id) {
  const auto add = [&id](const std::string& key, const std::string& value) {
    if (std::none_of(id.begin(), id.end(), [&](const auto& e) { return e.first == key; })) id.emplace_back(key, value);
  };
  if (c.schedule.warmup > 0) add("warmup", std::to_string(c.schedule.warmup));  // the CNNs have it already
  if (c.options.stack_weight_gradient_rows != kDefaultWeightGradRows)  // other gradient bits
    add("weight_grad_rows", std::to_string(c.options.stack_weight_gradient_rows));
  if (c.options.transpose_reused_weight_uses != kDefaultTransposeUses)
    add("weight_transpose_uses", std::to_string(c.options.transpose_reused_weight_uses));
  if (c.model_default) return;
  add("optimizer", c.name);
  if (c.name == "momentum" || c.name == "sgd") add("momentum", exact(c.momentum));
  if (c.options.nesterov) add("nesterov", "1");
  if (c.options.weight_decay != 0.0f) add("weight_decay", exact(c.options.weight_decay));
  if (c.name == "adam" || c.name == "adamw") {
    add("beta1", exact(c.options.beta1));
    add("beta2", exact(c.options.beta2));
    add("eps", exact(c.options.eps));
  }
  if (c.schedule.kind == LrSchedule::Kind::cosine)
    add("lr_schedule", c.schedule.str() + " over " + std::to_string(run_iters) + " iterations");
  else if (c.schedule.kind != LrSchedule::Kind::constant)
    add("lr_schedule", c.schedule.str());
}

json::Value optimizer_json(const OptimizerChoice& c) {
  json::Value o = {{"name", c.name}};
  const bool adam = c.options.optimizer != Optimizer::sgd;
  if (!adam) o["momentum"] = static_cast<double>(c.momentum);
  if (!adam) o["nesterov"] = c.options.nesterov;
  o["weight_decay"] = static_cast<double>(c.options.weight_decay);
  if (adam) {
    o["beta1"] = static_cast<double>(c.options.beta1);
    o["beta2"] = static_cast<double>(c.options.beta2);
    o["eps"] = static_cast<double>(c.options.eps);
  }
  o["lr_schedule"] = c.schedule.str();
  o["warmup"] = c.schedule.warmup;
  o["model_default"] = c.model_default;
  return o;
}

std::string optimizer_note(const OptimizerChoice& c) {
  if (c.model_default) return "";
  std::string s = " optimizer=" + c.name;
  if (c.options.nesterov) s += " nesterov";
  if (c.options.weight_decay != 0.0f) s += " wd=" + exact(c.options.weight_decay);
  if (c.schedule.kind != LrSchedule::Kind::constant) s += " schedule=" + c.schedule.str();
  return s;
}

float apply_learning_rate(Engine& engine, Graph& root, const OptimizerChoice& c, float base, uint64_t k, long total,
                          bool replicated) {
  // A long step schedule can underflow to 0, which the graph refuses: the smallest normal float instead.
  const float lr = std::max(c.schedule.at(base, static_cast<int64_t>(k), total), std::numeric_limits<float>::min());
  const Tensor hyper = root.optimizer_hyper();
  if (hyper.valid()) {
    const std::vector<float> h = root.optimizer_hyper_at(static_cast<int64_t>(k) + 1, lr);
    engine.write(root, hyper, h.data(), h.size());
  }
  const bool changes = c.schedule.warmup > 0 || c.schedule.kind != LrSchedule::Kind::constant;
  if (changes && !replicated) root.set_learning_rate(lr);
  return lr;
}

}  // namespace corun::cli
