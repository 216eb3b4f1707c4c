// op-harness cases of the normalisation family (issue 19): batch_norm and layer_norm with their gradients,
// on odd shapes, 2-D to 4-D, channel and row counts below and above the widest team.
#include "codelets/batch_norm/batch_norm.hpp"
#include "op_cases.hpp"

#include <utility>

namespace corun::codelets::testing {
namespace {

constexpr Access R = Access::read;
constexpr Access W = Access::write;
constexpr Access RW = Access::readwrite;

void batch_norm_cases(std::vector<OpCaseSpec>& out) {
  // The fast kernels' paths (batch_norm_fast.cpp): short rows (S < 16) in spans, long rows with and without a
  // tail, channel blocks of 1, several and 64 (the last one short), a channel of more than one block's floats.
  const Shape xs[] = {Shape{2, 1},       Shape{3, 5},         Shape{65, 130},       Shape{2, 3, 17},
                      Shape{4, 7, 5, 3}, Shape{2, 33, 9, 11}, Shape{2, 130, 3, 3},  Shape{3, 70, 4, 4},
                      Shape{3, 70, 5, 5}, Shape{2, 5, 40, 41}, Shape{9, 3, 64, 60}};
  const int64_t momentum = batch_norm_encode(0.9f);
  for (const Shape& x : xs) {
    const Shape c{x[1]};
    for (int training = 0; training < 2; ++training) {
      const std::string mode = training ? "_train" : "_infer";
      const Access stats = training ? RW : R;
      OpCaseSpec f = make("batch_norm" + mode + "_" + dims_str(x), OpKind::batch_norm, {x, c, c, c, c, x, c, c},
                          {R, R, R, stats, stats, W, W, W}, {training, momentum}, 1e-5f, 3.0f);
      f.indices = {{4, 5, 1}};  // running variances 1 .. 4 (inference takes their square root)
      out.push_back(std::move(f));
      out.push_back(make("batch_norm_grad" + mode + "_" + dims_str(x), OpKind::batch_norm_grad,
                         {x, c, c, c, x, x, c, c}, {R, R, R, R, R, W, W, W}, {training, momentum}, 1e-5f));
    }
  }
}

// The same on X in oneDNN's blocked layouts (Graph::block_layouts; batch_norm_blocked.cpp), nChw16c and
// nChw8c: rows shorter and longer than the 16 lanes, several blocks, with and without a tail.
void batch_norm_blocked_cases(std::vector<OpCaseSpec>& out) {
  const std::pair<Shape, int64_t> xs[] = {{Shape{3, 32, 5, 5}, 16}, {Shape{2, 48, 3, 2}, 16},
                                          {Shape{4, 24, 4, 4}, 8},  {Shape{2, 32, 20, 21}, 16}};
  const int64_t momentum = batch_norm_encode(0.9f);
  for (const auto& [x, block] : xs) {
    const Shape c{x[1]};
    for (int training = 0; training < 2; ++training) {
      const std::string name = std::string(training ? "_train" : "_infer") + "_" + dims_str(x) + "_blocked" +
                               std::to_string(block);
      const Access stats = training ? RW : R;
      std::array<int64_t, kMaxIntAttrs> a{};
      a[0] = training;
      a[1] = momentum;
      a[kBatchNormBlockAttr] = block;
      OpCaseSpec f = make("batch_norm" + name, OpKind::batch_norm, {x, c, c, c, c, x, c, c},
                          {R, R, R, stats, stats, W, W, W}, a, 1e-5f, 3.0f);
      f.indices = {{4, 5, 1}};
      out.push_back(std::move(f));
      out.push_back(make("batch_norm_grad" + name, OpKind::batch_norm_grad, {x, c, c, c, x, x, c, c},
                         {R, R, R, R, R, W, W, W}, a, 1e-5f));
    }
  }
}

void layer_norm_cases(std::vector<OpCaseSpec>& out) {
  const std::pair<Shape, int> cases[] = {{Shape{1}, 0},           {Shape{17}, 0},        {Shape{3, 33}, 1},
                                         {Shape{65, 127}, 1},     {Shape{300, 7}, 1},    {Shape{2, 3, 17, 5}, 1},
                                         {Shape{2, 3, 17, 5}, 3}, {Shape{4, 3, 300}, 2}, {Shape{5, 4099}, 1}};
  for (const auto& [x, axis] : cases) {
    Shape norm;
    norm.rank = x.rank - axis;
    for (int d = axis; d < x.rank; ++d) norm.dims[static_cast<size_t>(d - axis)] = x[d];
    const Shape rows{x.outer(axis)};
    const std::string suffix = "_" + dims_str(x) + "_axis" + std::to_string(axis);
    out.push_back(make("layer_norm" + suffix, OpKind::layer_norm, {x, norm, norm, x, rows, rows}, {R, R, R, W, W, W},
                       {axis}, 1e-5f, 3.0f));
    out.push_back(make("layer_norm_grad" + suffix, OpKind::layer_norm_grad, {x, norm, rows, rows, x, x, norm, norm},
                       {R, R, R, R, R, W, W, W}, {axis}, 1e-5f));
  }
}

}  // namespace

std::vector<OpCaseSpec> norm_op_cases() {
  std::vector<OpCaseSpec> out;
  batch_norm_cases(out);
  batch_norm_blocked_cases(out);
  layer_norm_cases(out);
  return out;
}

}  // namespace corun::codelets::testing
