// The update nodes of Graph::backward for the issue 19 optimizers (adam, adamw, sgd with weight decay or
// Nesterov), and the hyper-parameter tensor they read. Plain SGD and SGD with momentum stay in
// autodiff.cpp, unchanged, so their runs keep their bits.
#include "graphs/optimizer_updates.hpp"

#include "base/check.hpp"
#include "codelets/adam/adam.hpp"
#include "codelets/optimizer_hyper.hpp"
#include "codelets/sgd_wd/sgd_wd.hpp"
#include "graphs/graph_impl.hpp"

#include <cmath>

namespace corun::graphs {

using codelets::Access;
using codelets::OpKind;

bool uses_hyper_updates(const BackwardOptions& o) {
  return o.optimizer != Optimizer::sgd || o.weight_decay != 0.0f || o.nesterov;
}

void check_optimizer_options(const BackwardOptions& o) {
  const auto finite_in = [](float x, float lo, float hi) { return std::isfinite(x) && x >= lo && x < hi; };
  CORUN_CHECK(std::isfinite(o.weight_decay) && o.weight_decay >= 0.0f, Status::invalid_argument,
              "backward: weight_decay must be a number >= 0, got " << o.weight_decay);
  CORUN_CHECK(!o.nesterov || (o.optimizer == Optimizer::sgd && o.momentum > 0.0f), Status::invalid_argument,
              "backward: nesterov needs the sgd optimizer with momentum > 0 (as torch.optim.SGD)");
  if (o.optimizer == Optimizer::sgd) return;
  CORUN_CHECK(o.momentum == 0.0f, Status::invalid_argument,
              "backward: momentum is an sgd option; adam and adamw use beta1 (got momentum " << o.momentum << ")");
  CORUN_CHECK(finite_in(o.beta1, 0.0f, 1.0f), Status::invalid_argument, "backward: beta1 must be in [0, 1), got " << o.beta1);
  CORUN_CHECK(finite_in(o.beta2, 0.0f, 1.0f), Status::invalid_argument, "backward: beta2 must be in [0, 1), got " << o.beta2);
  CORUN_CHECK(std::isfinite(o.eps) && o.eps > 0.0f, Status::invalid_argument, "backward: eps must be > 0, got " << o.eps);
}

void append_hyper_updates(GradContext& ctx, const BackwardOptions& o) {
  detail::GraphImpl& g = ctx.graph();
  const Shape hs{codelets::kHyperCount};
  const int hyper = g.add_value(hs, "optimizer.hyper", ValueKind::state);
  ctx.track_value();
  g.optimizer_hyper = hyper;
  g.hyper_options = o;
  // Step 1 at the backward's learning rate: a graph run without set-up still makes a sensible update.
  codelets::fill_optimizer_hyper(g.values[static_cast<size_t>(hyper)].data.get(), 1, o.learning_rate, o.beta1,
                                 o.beta2);
  const bool adam = o.optimizer != Optimizer::sgd;
  const size_t nvalues = g.values.size();
  for (size_t v = 0; v < nvalues; ++v) {
    if (g.values[v].kind != ValueKind::param) continue;
    const int gv = g.grad_of[v];
    if (gv < 0) continue;  // a parameter the loss does not depend on
    const Shape s = g.values[v].shape;
    const std::string pname = g.values[v].name;
    const int w = static_cast<int>(v);
    if (adam) {
      const int m = g.add_value(s, pname + ".adam_m", ValueKind::state);
      ctx.track_value();
      const int sq = g.add_value(s, pname + ".adam_v", ValueKind::state);
      ctx.track_value();
      if (!o.sgd_update) continue;  // the state of an update made elsewhere
      const codelets::AdamAttrs a{o.beta1, o.beta2, o.eps, o.weight_decay, o.optimizer == Optimizer::adamw};
      ctx.add_node(OpKind::adam, "adam." + pname,
                   {{w, Access::readwrite, s}, {m, Access::readwrite, s}, {sq, Access::readwrite, s},
                    {gv, Access::read, s}, {hyper, Access::read, hs}},
                   codelets::adam_encode(a));
      continue;
    }
    const int vel = g.add_value(s, pname + ".velocity", ValueKind::state);
    ctx.track_value();
    if (!o.sgd_update) continue;
    ctx.add_node(OpKind::sgd_wd, "sgd_wd." + pname,
                 {{w, Access::readwrite, s}, {vel, Access::readwrite, s}, {gv, Access::read, s},
                  {hyper, Access::read, hs}},
                 codelets::sgd_wd_encode(o.momentum, o.weight_decay, o.nesterov));
  }
}

}  // namespace corun::graphs
