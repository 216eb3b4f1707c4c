// Op cases of the issue 19 optimizer updates (adam, sgd_wd) on the elementwise shapes. Their last buffer
// is the hyper-parameter tensor H (codelets/optimizer_hyper.hpp): filled with small whole numbers >= 1 so
// the bias-correction divisor is never 0; Adam's second moment V is filled with whole numbers >= 0 (a
// second moment is never negative, and sqrt of a negative one would only compare NaNs).
#include "op_cases.hpp"

#include "codelets/adam/adam.hpp"
#include "codelets/sgd_wd/sgd_wd.hpp"

namespace corun::codelets::testing {
namespace {

// The shared make() plus integer fills (the step count in H).
OpCaseSpec make(std::string name, OpKind kind, std::vector<Shape> shapes, std::vector<Access> modes,
                std::array<int64_t, kMaxIntAttrs> i, std::vector<OpCaseSpec::IntFill> fills) {
  OpCaseSpec c = testing::make(std::move(name), kind, std::move(shapes), std::move(modes), i);
  c.indices = std::move(fills);
  return c;
}

constexpr Access R = Access::read;
constexpr Access RW = Access::readwrite;

const std::vector<Shape> kShapes = {Shape{1}, Shape{17}, Shape{3, 33}, Shape{65, 127}, Shape{4099}};

}  // namespace

std::vector<OpCaseSpec> optim_op_cases() {
  std::vector<OpCaseSpec> out;
  const Shape h{kHyperCount};
  for (const Shape& s : kShapes) {
    const std::string d = dims_str(s);
    for (int decoupled = 0; decoupled < 2; ++decoupled) {
      const AdamAttrs a{0.9f, 0.999f, 1e-8f, decoupled ? 0.01f : 0.05f, decoupled != 0};
      out.push_back(make(std::string(decoupled ? "adamw_" : "adam_") + d, OpKind::adam, {s, s, s, s, h},
                         {RW, RW, RW, R, R}, adam_encode(a), {{2, 5, 0}, {4, 3, 1}}));
    }
    out.push_back(make("adam_nodecay_" + d, OpKind::adam, {s, s, s, s, h}, {RW, RW, RW, R, R},
                       adam_encode({0.8f, 0.99f, 1e-3f, 0.0f, false}), {{2, 5, 0}, {4, 3, 1}}));
    out.push_back(make("sgd_wd_" + d, OpKind::sgd_wd, {s, s, s, h}, {RW, RW, R, R},
                       sgd_wd_encode(0.9f, 0.01f, false), {{3, 3, 1}}));
    out.push_back(make("sgd_wd_nesterov_" + d, OpKind::sgd_wd, {s, s, s, h}, {RW, RW, R, R},
                       sgd_wd_encode(0.5f, 0.1f, true), {{3, 3, 1}}));
  }
  return out;
}

}  // namespace corun::codelets::testing
