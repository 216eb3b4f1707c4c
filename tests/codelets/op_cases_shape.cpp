// Op cases of the issue-19 shape ops: transpose, softmax / log_softmax (and gradients) along every axis,
// batch_matmul with broadcast batches and transposes (including the reducing backward form), dropout and
// gather. Odd extents (1, 3, 17, 33, 65) put split boundaries inside rows, tiles and lanes.
#include "op_cases.hpp"

#include <string>
#include <utility>

namespace corun::codelets::testing {
namespace {

constexpr Access R = Access::read;
constexpr Access W = Access::write;

std::string dims(const Shape& s) {
  std::string out;
  for (int d = 0; d < s.rank; ++d) out += (d ? "x" : "") + std::to_string(s[d]);
  return out;
}

void transpose_cases(std::vector<OpCaseSpec>& out) {
  struct Case {
    Shape x;
    std::array<int64_t, kMaxIntAttrs> perm;
  };
  const Case cases[] = {
      {Shape{17}, {0}},
      {Shape{33, 65}, {1, 0}},
      {Shape{1, 17}, {1, 0}},
      {Shape{3, 17, 33}, {0, 2, 1}},
      {Shape{3, 17, 33}, {2, 0, 1}},
      {Shape{3, 17, 33}, {1, 0, 2}},
      {Shape{2, 3, 17, 5}, {0, 2, 1, 3}},
      {Shape{2, 3, 17, 5}, {0, 1, 3, 2}},
      {Shape{2, 3, 17, 5}, {3, 2, 1, 0}},
      {Shape{5, 1, 65, 3}, {2, 0, 3, 1}},
      {Shape{4, 1, 1, 1}, {3, 2, 1, 0}},
      {Shape{2, 65, 33, 3}, {0, 3, 1, 2}},
  };
  for (const Case& c : cases) {
    int64_t y[kMaxDims];
    std::string p;
    for (int d = 0; d < c.x.rank; ++d) {
      y[d] = c.x[static_cast<int>(c.perm[static_cast<size_t>(d)])];
      p += std::to_string(c.perm[static_cast<size_t>(d)]);
    }
    out.push_back(
        make("transpose_" + dims(c.x) + "_p" + p, OpKind::transpose, {c.x, Shape::of(y, c.x.rank)}, {R, W}, c.perm));
  }
}

void softmax_cases(std::vector<OpCaseSpec>& out) {
  const std::pair<Shape, int> cases[] = {{Shape{17}, 0},        {Shape{33, 65}, 1},      {Shape{33, 65}, 0},
                                         {Shape{3, 130, 5}, 1}, {Shape{2, 3, 17, 5}, 3}, {Shape{2, 3, 17, 5}, 1},
                                         {Shape{1, 200, 1}, 1}, {Shape{3, 1, 7}, 1}};
  for (const auto& [s, axis] : cases) {
    const std::string n = dims(s) + "_a" + std::to_string(axis);
    for (float scale : {1.0f, 60.0f}) {  // large inputs: the max subtraction keeps exp finite
      const std::string sfx = scale > 1.0f ? "_large" : "";
      out.push_back(make("softmax_" + n + sfx, OpKind::softmax, {s, s}, {R, W}, {axis}, 0.0f, scale));
      out.push_back(make("log_softmax_" + n + sfx, OpKind::log_softmax, {s, s}, {R, W}, {axis}, 0.0f, scale));
    }
    out.push_back(make("softmax_grad_" + n, OpKind::softmax_grad, {s, s, s}, {R, R, W}, {axis}));
    out.push_back(make("log_softmax_grad_" + n, OpKind::log_softmax_grad, {s, s, s}, {R, R, W}, {axis}));
  }
}

void batch_matmul_cases(std::vector<OpCaseSpec>& out) {
  struct Case {
    const char* name;
    Shape a, b, c;
    int ta, tb;
  };
  const Case cases[] = {
      {"attn_scores", Shape{2, 3, 17, 5}, Shape{2, 3, 5, 17}, Shape{2, 3, 17, 17}, 0, 0},
      {"attn_nt", Shape{2, 3, 17, 5}, Shape{2, 3, 17, 5}, Shape{2, 3, 17, 17}, 0, 1},
      {"attn_tn", Shape{2, 3, 5, 17}, Shape{2, 3, 5, 17}, Shape{2, 3, 17, 17}, 1, 0},
      {"bcast_b", Shape{4, 33, 65}, Shape{65, 17}, Shape{4, 33, 17}, 0, 0},
      {"bcast_a", Shape{33, 65}, Shape{3, 65, 17}, Shape{3, 33, 17}, 0, 0},
      {"bcast_both", Shape{2, 1, 7, 9}, Shape{1, 3, 9, 5}, Shape{2, 3, 7, 5}, 0, 0},
      {"one_entry_tall", Shape{1, 300, 33}, Shape{1, 33, 70}, Shape{1, 300, 70}, 0, 0},
      {"many_small", Shape{64, 3, 1}, Shape{64, 1, 3}, Shape{64, 3, 3}, 0, 0},
      // Backward forms: the output is a broadcast operand's gradient, summed over the full batch.
      {"grad_a_of_bcast", Shape{4, 33, 17}, Shape{65, 17}, Shape{33, 65}, 0, 1},
      {"grad_b_of_bcast", Shape{4, 33, 65}, Shape{4, 33, 17}, Shape{65, 17}, 1, 0},
      {"grad_mixed", Shape{2, 3, 7, 5}, Shape{1, 3, 9, 5}, Shape{2, 1, 7, 9}, 0, 1},
  };
  for (const Case& c : cases)
    out.push_back(make(std::string("batch_matmul_") + c.name + "_" + dims(c.c), OpKind::batch_matmul, {c.a, c.b, c.c},
                       {R, R, W}, {c.ta, c.tb}));
}

void dropout_cases(std::vector<OpCaseSpec>& out) {
  const Shape shapes[] = {Shape{1}, Shape{17}, Shape{33, 65}, Shape{2, 3, 17, 5}, Shape{4099}};
  for (const Shape& s : shapes)
    for (float ratio : {0.1f, 0.5f}) {
      const std::string n = dims(s) + (ratio < 0.2f ? "_r10" : "_r50");
      OpCaseSpec f = make("dropout_" + n, OpKind::dropout, {s, Shape{1}, s}, {R, R, W}, {12345}, ratio);
      f.indices = {{1, 1000}};  // the step: an iteration number
      out.push_back(std::move(f));
      OpCaseSpec g = make("dropout_grad_" + n, OpKind::dropout_grad, {Shape{1}, s, s}, {R, R, W}, {777}, ratio);
      g.indices = {{0, 1000}};
      out.push_back(std::move(g));
    }
}

void gather_cases(std::vector<OpCaseSpec>& out) {
  struct Case {
    Shape x, idx, y;
    int axis;
  };
  const Case cases[] = {
      {Shape{17}, Shape{5}, Shape{5}, 0},
      {Shape{33, 65}, Shape{7}, Shape{7, 65}, 0},
      {Shape{33, 65}, Shape{3, 4}, Shape{33, 3, 4}, 1},
      {Shape{2, 17, 5}, Shape{40}, Shape{2, 40, 5}, 1},  // more indices than rows: repeats sum in order
      {Shape{3, 5, 7, 2}, Shape{1}, Shape{3, 5, 1, 2}, 2},
      {Shape{3, 5, 7}, Shape{2, 3}, Shape{3, 5, 2, 3}, 2},
  };
  for (const Case& c : cases) {
    const int64_t extent = c.x[c.axis];
    const std::string n = dims(c.x) + "_i" + dims(c.idx) + "_a" + std::to_string(c.axis);
    OpCaseSpec f = make("gather_" + n, OpKind::gather, {c.x, c.idx, c.y}, {R, R, W}, {c.axis});
    f.indices = {{1, extent, -extent}};  // negative indices count from the end
    out.push_back(std::move(f));
    OpCaseSpec g = make("gather_grad_" + n, OpKind::gather_grad, {c.idx, c.y, c.x}, {R, R, W}, {c.axis});
    g.indices = {{0, extent, -extent}};
    out.push_back(std::move(g));
  }
}

}  // namespace

std::vector<OpCaseSpec> shape_op_cases() {
  std::vector<OpCaseSpec> out;
  transpose_cases(out);
  softmax_cases(out);
  batch_matmul_cases(out);
  dropout_cases(out);
  gather_cases(out);
  return out;
}

}  // namespace corun::codelets::testing
