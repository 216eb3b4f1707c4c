// phased_gate: the Phased LSTM time gate K [B,H] from timestamps T [B], periods TAU [H] and shifts S [H]
// (codelets/phased_gate/phased_gate.hpp); f: r_on, i[0]: alpha's bits. Periods and shifts learn;
// timestamps are data.
#include "graphs/ops/backward.hpp"
#include "graphs/ops/rules.hpp"

#include "base/check.hpp"
#include "codelets/phased_gate/phased_gate.hpp"

#include <sstream>

namespace corun {
namespace graphs {
namespace {

using codelets::Access;
using codelets::OpKind;

std::vector<Shape> shapes(const ShapeQuery& q) {
  const Shape &st = q.in[0], &sp = q.in[1], &ss = q.in[2];
  if (st.rank != 1) q.mismatch("timestamps must be 1-D [batch]", "time", st, "tau", sp);
  if (sp.rank != 1 || sp != ss) q.mismatch("periods and shifts must both be 1-D [hidden]", "tau", sp, "shift", ss);
  codelets::OpCall call;
  call.i = q.i;
  const float r_on = q.f, alpha = codelets::phased_gate_alpha(call);
  if (!(r_on > 0.0f && r_on <= 1.0f && alpha >= 0.0f && alpha <= 1.0f)) {
    std::ostringstream m;
    m << "r_on must be in (0, 1] and alpha in [0, 1], got r_on=" << r_on << " alpha=" << alpha;
    q.fail(m.str());
  }
  return {Shape{st[0], sp[0]}};
}

void backward(GradContext& ctx) {
  CORUN_CHECK(!ctx.need(0), Status::invalid_argument,
              "backward: phased_gate '" << ctx.node().name
                                        << "': its timestamps depend on parameters, but the time gate has no "
                                           "gradient w.r.t. time; pass them as an input");
  const int t = ctx.in(0), tau = ctx.in(1), s = ctx.in(2), dk = ctx.grad(ctx.in(3));
  if (dk < 0 || (!ctx.need(1) && !ctx.need(2))) return;
  const int dtau = ctx.new_grad_value(ctx.shape(tau), "d" + ctx.name(tau) + ".gate" + std::to_string(ctx.next_id()));
  const int ds = ctx.new_grad_value(ctx.shape(s), "d" + ctx.name(s) + ".gate" + std::to_string(ctx.next_id()));
  ctx.add_node(OpKind::phased_gate_grad, ctx.tag(),
               {{t, Access::read, ctx.shape(t)},
                {tau, Access::read, ctx.shape(tau)},
                {s, Access::read, ctx.shape(s)},
                {dk, Access::read, ctx.shape(ctx.in(3))},
                {dtau, Access::write, ctx.shape(tau)},
                {ds, Access::write, ctx.shape(s)}},
               ctx.call().i, ctx.call().f);
  if (ctx.need(1)) ctx.contribute(tau, dtau, true);
  if (ctx.need(2)) ctx.contribute(s, ds, true);
}

}  // namespace

const OpRules phased_gate_rules{&shapes, &backward};

}  // namespace graphs

Tensor Graph::phased_gate(Tensor time, Tensor tau, Tensor shift, float r_on, float alpha, const std::string& name) {
  return graphs::build1(*this, codelets::OpKind::phased_gate,
                        {{time, tau, shift}, {codelets::phased_gate_alpha_bits(alpha), 0, 0, 0}, r_on}, name);
}

}  // namespace corun
