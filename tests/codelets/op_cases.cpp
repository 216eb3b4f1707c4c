// Builds the op case table. Shapes mix tiny, odd (1, 3, 17, 33, 65, 127) and moderately large sizes so
// that splits hit empty members, partial alignment blocks and row boundaries inside a member's block.
#include "op_cases.hpp"

#include "codelets/conv2d/conv2d.hpp"
#include "codelets/ew_chain/ew_chain.hpp"
#include "codelets/sgd_momentum/sgd_momentum.hpp"
#include "codelets/phased_gate/phased_gate.hpp"
#include "codelets/unary_math/unary_math.hpp"

#include <utility>

namespace corun::codelets::testing {
namespace {

using Shapes = std::vector<Shape>;

constexpr Access R = Access::read;
constexpr Access W = Access::write;
constexpr Access RW = Access::readwrite;

void matmul_cases(std::vector<OpCaseSpec>& out) {
  const int64_t sizes[][3] = {{1, 1, 1},     {1, 17, 3},   {3, 1, 17},   {17, 33, 1},   {65, 33, 17},
                              {33, 65, 127}, {127, 3, 65}, {3, 300, 65}, {257, 33, 65}, {200, 300, 150}};
  for (const auto& mnk : sizes)
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (int acc = 0; acc < 2; ++acc) {
          const int64_t m = mnk[0], n = mnk[1], k = mnk[2];
          const Shape a = ta ? Shape{k, m} : Shape{m, k};
          const Shape b = tb ? Shape{n, k} : Shape{k, n};
          std::string name = std::string("matmul_") + (ta ? 't' : 'n') + (tb ? 't' : 'n') + "_" +
                             std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                             (acc ? "_acc" : "");
          out.push_back(make(name, OpKind::matmul, {a, b, Shape{m, n}}, {R, R, acc ? RW : W}, {ta, tb, acc}));
        }
}

const Shapes kElementwise = {Shape{1},       Shape{17},          Shape{3, 33},
                             Shape{65, 127}, Shape{2, 3, 17, 5}, Shape{4099}};

// Ops whose buffers all share one shape: `inputs` read buffers then one output.
void same_shape_cases(std::vector<OpCaseSpec>& out, OpKind kind, const char* op, int inputs,
                      float scale = 1.0f, const char* suffix = "") {
  for (const Shape& s : kElementwise) {
    Shapes shapes(static_cast<size_t>(inputs + 1), s);
    std::vector<Access> modes(static_cast<size_t>(inputs), R);
    modes.push_back(W);
    out.push_back(make(std::string(op) + "_" + dims_str(s) + suffix, kind, shapes, modes, {}, 0.0f, scale));
  }
}

void bias_add_cases(std::vector<OpCaseSpec>& out) {
  const Shapes rows = {Shape{1, 33}, Shape{3, 17}, Shape{127, 65}, Shape{4, 5, 7}, Shape{17, 1}};
  for (const Shape& a : rows) {
    const Shape bias{a[a.rank - 1]};
    out.push_back(make("add_bias_" + dims_str(a), OpKind::add, {a, bias, a}, {R, R, W}));
  }
}

// One concat case and the matching split case.
void concat_split_case(std::vector<OpCaseSpec>& out, int dim, const Shapes& parts, const Shape& whole) {
  std::string name = "d" + std::to_string(dim);
  for (const Shape& p : parts) name += "_" + dims_str(p);
  Shapes cat = parts;
  cat.push_back(whole);
  std::vector<Access> cat_modes(parts.size(), R);
  cat_modes.push_back(W);
  out.push_back(make("concat_" + name, OpKind::concat, cat, cat_modes, {dim}));
  Shapes spl = {whole};
  spl.insert(spl.end(), parts.begin(), parts.end());
  std::vector<Access> spl_modes(parts.size(), W);
  spl_modes.insert(spl_modes.begin(), R);
  out.push_back(make("split_" + name, OpKind::split, spl, spl_modes, {dim}));
}

void concat_split_cases(std::vector<OpCaseSpec>& out) {
  concat_split_case(out, 0, {Shape{17}, Shape{33}}, Shape{50});
  concat_split_case(out, 0, {Shape{2, 5}, Shape{3, 5}, Shape{1, 5}}, Shape{6, 5});
  concat_split_case(out, 1, {Shape{3, 5}, Shape{3, 7}}, Shape{3, 12});
  concat_split_case(out, 1, {Shape{65, 127}, Shape{65, 1}, Shape{65, 33}}, Shape{65, 161});
  concat_split_case(out, 1, {Shape{2, 3, 4}, Shape{2, 5, 4}}, Shape{2, 8, 4});
  concat_split_case(out, 3, {Shape{2, 3, 4, 5}, Shape{2, 3, 4, 1}}, Shape{2, 3, 4, 6});
  concat_split_case(out, 0, {Shape{1, 127}, Shape{1, 127}}, Shape{2, 127});
}

// One slice case and the matching slice_grad case.
void slice_case(std::vector<OpCaseSpec>& out, const Shape& x, int dim, int64_t start, int64_t len) {
  Shape y = x;
  y.dims[static_cast<size_t>(dim)] = len;
  const std::string name =
      dims_str(x) + "_d" + std::to_string(dim) + "_" + std::to_string(start) + "_" + std::to_string(len);
  out.push_back(make("slice_" + name, OpKind::slice, {x, y}, {R, W}, {dim, start, len}));
  out.push_back(make("slice_grad_" + name, OpKind::slice_grad, {y, x}, {R, W}, {dim, start, len}));
}

void slice_cases(std::vector<OpCaseSpec>& out) {
  slice_case(out, Shape{17}, 0, 3, 5);
  slice_case(out, Shape{33, 65}, 1, 10, 33);
  slice_case(out, Shape{33, 65}, 0, 0, 1);
  slice_case(out, Shape{127, 3}, 0, 100, 27);
  slice_case(out, Shape{3, 5, 7, 9}, 2, 2, 3);
  slice_case(out, Shape{3, 5, 7, 9}, 3, 8, 1);
  slice_case(out, Shape{4, 65}, 1, 0, 65);
}

// One sum case and the matching sum_grad case.
void sum_case(std::vector<OpCaseSpec>& out, const Shape& x, int dim, float f) {
  Shape y;
  if (x.rank == 1) {
    y = Shape{1};
  } else {
    int64_t dims[kMaxDims];
    int n = 0;
    for (int d = 0; d < x.rank; ++d)
      if (d != dim) dims[n++] = x[d];
    y = Shape::of(dims, n);
  }
  const std::string name = dims_str(x) + "_d" + std::to_string(dim) + (f == 1.0f ? "" : "_scaled");
  out.push_back(make("sum_" + name, OpKind::sum, {x, y}, {R, W}, {dim}, f));
  out.push_back(make("sum_grad_" + name, OpKind::sum_grad, {y, x}, {R, W}, {dim}, f));
}

void sum_cases(std::vector<OpCaseSpec>& out) {
  sum_case(out, Shape{1}, 0, 1.0f);
  sum_case(out, Shape{17}, 0, 1.0f);
  sum_case(out, Shape{4099}, 0, 0.5f);
  sum_case(out, Shape{33, 65}, 0, 1.0f);
  sum_case(out, Shape{33, 65}, 1, 0.25f);
  sum_case(out, Shape{3, 5, 7}, 0, 1.0f);
  sum_case(out, Shape{3, 5, 7}, 1, 1.0f);
  sum_case(out, Shape{3, 5, 7}, 2, 1.0f);
  sum_case(out, Shape{2, 3, 4, 17}, 3, -2.0f);
  sum_case(out, Shape{127, 1, 33}, 1, 1.0f);
}

void softmax_cases(std::vector<OpCaseSpec>& out) {
  const int64_t sizes[][2] = {{1, 1}, {1, 10}, {3, 17}, {64, 10}, {127, 65}, {33, 1000}};
  for (const auto& bc : sizes)
    for (const float scale : {1.0f, 100.0f}) {
      const Shape z{bc[0], bc[1]}, l{bc[0]};
      const std::string name = dims_str(z) + (scale == 1.0f ? "" : "_large");
      out.push_back(
          make("softmax_xent_" + name, OpKind::softmax_xent, {z, z, z, l}, {R, R, W, W}, {}, 0.0f, scale));
      out.push_back(make("softmax_xent_grad_" + name, OpKind::softmax_xent_grad, {z, z, l, z}, {R, R, R, W}));
    }
}

void sgd_cases(std::vector<OpCaseSpec>& out) {
  for (const Shape& s : kElementwise)
    out.push_back(make("sgd_" + dims_str(s), OpKind::sgd, {s, s}, {RW, R}, {}, 0.01f));
}

// lstm_cell and lstm_cell_grad on [B, H] cell states (B = 1 and 3 leave members without rows).
void lstm_cell_cases(std::vector<OpCaseSpec>& out) {
  const int64_t sizes[][2] = {{1, 1}, {3, 5}, {5, 1}, {17, 33}, {64, 128}, {2, 100}};
  for (const auto& bh : sizes) {
    const Shape z{bh[0], 4 * bh[1]}, c{bh[0], bh[1]};
    const std::string name = dims_str(c);
    out.push_back(make("lstm_cell_" + name, OpKind::lstm_cell, {z, c, c, c, z, c}, {R, R, W, W, W, W}));
    out.push_back(make("lstm_cell_large_" + name, OpKind::lstm_cell, {z, c, c, c, z, c}, {R, R, W, W, W, W}, {},
                       0.0f, 30.0f));
    out.push_back(make("lstm_cell_grad_" + name, OpKind::lstm_cell_grad, {z, c, c, c, c, z, c},
                       {R, R, R, R, R, W, W}));
  }
}

// ew_chain programs ({op, a, b} triples; operands >= n_in are earlier results) on every elementwise shape.
void ew_chain_cases(std::vector<OpCaseSpec>& out) {
  auto op = [](OpKind k) { return static_cast<int32_t>(k); };
  struct Program {
    const char* name;
    int n_in;
    std::vector<int32_t> code;
  };
  const Program programs[] = {
      {"sigmoid_of_sum", 2, {op(OpKind::add), 0, 1, op(OpKind::sigmoid), 2, -1}},
      // The unfused LSTM backward's dc: dC + tanh_grad(TC, dH * o).
      {"cell_dc", 4, {op(OpKind::mul), 1, 2, op(OpKind::tanh_grad), 0, 4, op(OpKind::add), 3, 5}},
      // Every chainable op once, a result used twice (mul(t1, t1)) and inputs reused after results.
      {"every_op", 3, {op(OpKind::sub), 0, 1,          op(OpKind::relu), 3, -1,       op(OpKind::mul), 4, 4,
                       op(OpKind::tanh), 5, -1,        op(OpKind::sigmoid), 2, -1,    op(OpKind::sigmoid_grad), 7, 6,
                       op(OpKind::tanh_grad), 6, 0,    op(OpKind::relu_grad), 1, 9,   op(OpKind::add), 8, 10}},
      // gelu's backward after its forward on a sum: gelu_grad(x0 + x1, gelu(x0 + x1)).
      {"gelu", 2, {op(OpKind::add), 0, 1, op(OpKind::gelu), 2, -1, op(OpKind::gelu_grad), 2, 3}},
      // hard_swish's backward after its forward on a sum, as gelu's.
      {"hard_swish", 2, {op(OpKind::add), 0, 1, op(OpKind::hard_swish), 2, -1, op(OpKind::hard_swish_grad), 2, 3}},
  };
  for (const Program& p : programs)
    for (const Shape& s : kElementwise) {
      std::vector<Access> modes(static_cast<size_t>(p.n_in), R);
      modes.push_back(W);
      OpCaseSpec c = make(std::string("ew_chain_") + p.name + "_" + dims_str(s), OpKind::ew_chain,
                          Shapes(static_cast<size_t>(p.n_in + 1), s), modes);
      c.call.program = p.code;
      out.push_back(std::move(c));
    }
  // The longest chain allowed: sixteen instructions alternating tanh and a mul with the one input.
  std::vector<int32_t> longest;
  for (int k = 0; k < kMaxEwInstructions; ++k) {
    const int32_t prev = k;  // input 0 for k = 0, else the result of instruction k - 1 (operand 1 + k - 1)
    longest.insert(longest.end(), k % 2 ? std::initializer_list<int32_t>{op(OpKind::mul), prev, 0}
                                        : std::initializer_list<int32_t>{op(OpKind::tanh), prev, -1});
  }
  OpCaseSpec c = make("ew_chain_longest_4099", OpKind::ew_chain, {Shape{4099}, Shape{4099}}, {R, W});
  c.call.program = longest;
  out.push_back(std::move(c));
}

// conv2d and its two backward ops on one geometry: {N, C, H, W, K, R(=S), stride, pad}. Covers 1x1 (the
// im2col-free path), odd image sizes, stride 2, padding wider than needed, K not a multiple of the filter
// tile, a batch of one (members without images) and the CIFAR-quick / PathNet shapes.
void conv_cases(std::vector<OpCaseSpec>& out) {
  const int64_t geoms[][8] = {{1, 1, 1, 1, 1, 1, 1, 0},   {2, 3, 5, 7, 4, 3, 1, 1},  {3, 2, 9, 8, 5, 3, 2, 1},
                              {4, 5, 6, 6, 17, 1, 1, 0},  {2, 4, 7, 5, 3, 5, 1, 2},  {1, 3, 8, 8, 9, 3, 2, 0},
                              {5, 2, 4, 4, 3, 2, 1, 3},   {8, 1, 28, 28, 32, 5, 1, 2}, {4, 16, 16, 16, 16, 3, 1, 1}};
  for (const auto& q : geoms) {
    const int64_t n = q[0], c = q[1], h = q[2], w = q[3], k = q[4], r = q[5], stride = q[6], pad = q[7];
    const int64_t oh = window_out_extent(h, r, stride, pad), ow = window_out_extent(w, r, stride, pad);
    const Shape x{n, c, h, w}, wt{k, c, r, r}, b{k}, y{n, k, oh, ow};
    const std::string name = dims_str(x) + "_k" + std::to_string(k) + "r" + std::to_string(r) + "s" +
                             std::to_string(stride) + "p" + std::to_string(pad);
    out.push_back(make("conv2d_" + name, OpKind::conv2d, {x, wt, b, y}, {R, R, R, W}, {stride, pad}));
    out.push_back(make("conv2d_grad_data_" + name, OpKind::conv2d_grad_data, {y, wt, x}, {R, R, W}, {stride, pad}));
    out.push_back(
        make("conv2d_grad_filter_" + name, OpKind::conv2d_grad_filter, {x, y, wt, b}, {R, R, W, W}, {stride, pad}));
  }
}

// Pooling forward and backward: {N, C, H, W, kernel, stride, pad}; overlapping windows (3/2), tiling ones
// (2/2), padding, windows that do not tile the image, and a small value range (scale) for exact ties.
void pool_cases(std::vector<OpCaseSpec>& out) {
  const int64_t geoms[][7] = {{1, 1, 1, 1, 1, 1, 0}, {2, 3, 7, 7, 3, 2, 0},   {3, 2, 8, 6, 2, 2, 0},
                              {2, 5, 9, 9, 3, 2, 1}, {1, 4, 5, 11, 3, 1, 1},  {4, 32, 28, 28, 3, 2, 0},
                              {2, 3, 6, 6, 6, 6, 0}};
  for (const auto& q : geoms) {
    const int64_t n = q[0], c = q[1], h = q[2], w = q[3], kernel = q[4], stride = q[5], pad = q[6];
    const Shape x{n, c, h, w}, y{n, c, window_out_extent(h, kernel, stride, pad), window_out_extent(w, kernel, stride, pad)};
    const std::string name = dims_str(x) + "_k" + std::to_string(kernel) + "s" + std::to_string(stride) + "p" +
                             std::to_string(pad);
    const std::array<int64_t, kMaxIntAttrs> a{kernel, stride, pad, 0};
    out.push_back(make("max_pool_" + name, OpKind::max_pool, {x, y}, {R, W}, a));
    out.push_back(make("max_pool_grad_" + name, OpKind::max_pool_grad, {x, y, x}, {R, R, W}, a));
    out.push_back(make("avg_pool_" + name, OpKind::avg_pool, {x, y}, {R, W}, a));
    out.push_back(make("avg_pool_grad_" + name, OpKind::avg_pool_grad, {y, x}, {R, W}, a));
  }
}

void add_n_cases(std::vector<OpCaseSpec>& out) {
  for (int k : {1, 2, 6})
    for (const Shape& s : kElementwise) {
      Shapes shapes(static_cast<size_t>(k + 1), s);
      std::vector<Access> modes(static_cast<size_t>(k), R);
      modes.push_back(W);
      out.push_back(make("add_n" + std::to_string(k) + "_" + dims_str(s), OpKind::add_n, shapes, modes));
    }
}

void sgd_momentum_cases(std::vector<OpCaseSpec>& out) {
  for (const Shape& s : kElementwise)
    out.push_back(make("sgd_momentum_" + dims_str(s), OpKind::sgd_momentum, {s, s, s}, {RW, RW, R},
                       {sgd_momentum_encode(0.9f)}, 0.01f));
}

void reshape_cases(std::vector<OpCaseSpec>& out) {
  const Shape pairs[][2] = {{Shape{1}, Shape{1}}, {Shape{4, 3, 5, 7}, Shape{4, 105}}, {Shape{33, 65}, Shape{2145}},
                            {Shape{4099}, Shape{1, 4099}}};
  for (const auto& p : pairs)
    out.push_back(make("reshape_" + dims_str(p[0]) + "_to_" + dims_str(p[1]), OpKind::reshape, {p[0], p[1]}, {R, W}));
}

// embedding and embedding_grad: index counts below, equal to and far above the vocabulary (repeated rows
// in the scatter-add), D = 1 and D not a multiple of 16.
void embedding_cases(std::vector<OpCaseSpec>& out) {
  struct Case {
    Shape idx;
    int64_t vocab, dim;
  };
  const Case cases[] = {{Shape{1}, 1, 1},        {Shape{17}, 10, 16},  {Shape{3, 5}, 100, 3},
                        {Shape{256, 1}, 10, 16}, {Shape{64}, 7, 33},   {Shape{5}, 1000, 16}};
  for (const Case& c : cases) {
    const int64_t n = c.idx.numel();
    const Shape table{c.vocab, c.dim}, y{n, c.dim};
    const std::string name = dims_str(c.idx) + "_v" + std::to_string(c.vocab) + "_d" + std::to_string(c.dim);
    OpCaseSpec f = make("embedding_" + name, OpKind::embedding, {c.idx, table, y}, {R, R, W});
    f.indices = {{0, c.vocab}};
    out.push_back(std::move(f));
    OpCaseSpec g = make("embedding_grad_" + name, OpKind::embedding_grad, {c.idx, y, table}, {R, R, W});
    g.indices = {{0, c.vocab}};
    out.push_back(std::move(g));
  }
}

void reduce_sum_cases(std::vector<OpCaseSpec>& out) {
  for (const Shape& s : kElementwise)
    for (const float f : {1.0f, -0.25f}) {
      const std::string name = dims_str(s) + (f == 1.0f ? "" : "_scaled");
      out.push_back(make("reduce_sum_" + name, OpKind::reduce_sum, {s, Shape{1}}, {R, W}, {}, f));
      out.push_back(make("reduce_sum_grad_" + name, OpKind::reduce_sum_grad, {Shape{1}, s}, {R, W}, {}, f));
    }
}

// A group of five members: three embeddings (two share one index buffer), a matmul and a reduce_sum,
// so team members get one, several or no members depending on the width.
void group_cases(std::vector<OpCaseSpec>& out) {
  auto call = [](OpKind kind, Shapes shapes, std::vector<Access> modes, std::array<int64_t, kMaxIntAttrs> i = {},
                 float f = 0.0f) {
    OpCall c;
    c.kind = kind;
    c.shapes = std::move(shapes);
    c.modes = std::move(modes);
    c.i = i;
    c.f = f;
    return c;
  };
  // Group buffers: 0 idx0 [17], 1 idx1 [17], 2 T0 [10,16], 3 T1 [20,3], 4 T2 [10,16], 5 Y0, 6 Y1, 7 Y2,
  // 8 A [33,17], 9 B [17,65], 10 C [33,65], 11 S [1].
  const Shape idx{17}, t0{10, 16}, t1{20, 3}, y0{17, 16}, y1{17, 3}, a{33, 17}, b{17, 65}, c{33, 65};
  OpCaseSpec g = make("group_embeddings_matmul_sum", OpKind::group,
                      {idx, idx, t0, t1, t0, y0, y1, y0, a, b, c, Shape{1}}, {R, R, R, R, R, W, W, W, R, R, W, W});
  g.call.members = {call(OpKind::embedding, {idx, t0, y0}, {R, R, W}),
                    call(OpKind::embedding, {idx, t1, y1}, {R, R, W}),
                    call(OpKind::embedding, {idx, t0, y0}, {R, R, W}),
                    call(OpKind::matmul, {a, b, c}, {R, R, W}),
                    call(OpKind::reduce_sum, {c, Shape{1}}, {R, W}, {}, 0.5f)};
  // The reduce_sum reads A, not C, so the members stay independent (A viewed as [33*17]).
  g.call.members[4].shapes[0] = Shape{33 * 17};
  g.call.program = {0, 2, 5, /**/ 1, 3, 6, /**/ 0, 4, 7, /**/ 8, 9, 10, /**/ 8, 11};
  g.indices = {{0, 10}, {1, 10}};
  out.push_back(std::move(g));
}

// phased_gate: timestamps and shifts uniform in [-30, 30] (negative t - s exercises the phase wrap), integer
// periods in [1, 40), open ratios of the paper's training (0.05) and a wide one.
void phased_gate_cases(std::vector<OpCaseSpec>& out) {
  const int64_t sizes[][2] = {{1, 1}, {3, 17}, {64, 128}, {5, 33}};
  for (const auto& bh : sizes)
    for (const float r_on : {0.05f, 0.5f}) {
      const Shape t{bh[0]}, h{bh[1]}, k{bh[0], bh[1]};
      OpCaseSpec c = make("phased_gate_" + dims_str(k) + (r_on < 0.1f ? "_ron05" : "_ron50"), OpKind::phased_gate,
                          {t, h, h, k}, {R, R, R, W}, {phased_gate_alpha_bits(1e-3f)}, r_on, 30.0f);
      c.indices = {{1, 40, 1}};
      out.push_back(std::move(c));
      const Shape grads[] = {t, h, h, k, h, h};
      OpCaseSpec gc = make("phased_gate_grad_" + dims_str(k) + (r_on < 0.1f ? "_ron05" : "_ron50"),
                           OpKind::phased_gate_grad, {grads, grads + 6}, {R, R, R, R, W, W},
                           {phased_gate_alpha_bits(1e-3f)}, r_on, 30.0f);
      gc.indices = {{1, 40, 1}};
      out.push_back(std::move(gc));
    }
}

// leaky_relu and its gradient with the usual slope, a steep one and a negative one (f is alpha).
void leaky_relu_cases(std::vector<OpCaseSpec>& out) {
  for (const float alpha : {0.01f, 0.5f, -0.25f})
    for (const Shape& s : kElementwise) {
      const std::string name = dims_str(s) + (alpha == 0.01f ? "" : alpha > 0 ? "_a50" : "_neg");
      out.push_back(make("leaky_relu_" + name, OpKind::leaky_relu, {s, s}, {R, W}, {}, alpha));
      out.push_back(make("leaky_relu_grad_" + name, OpKind::leaky_relu_grad, {s, s, s}, {R, R, W}, {}, alpha));
    }
}

// hard_sigmoid and its gradient with ONNX's default alpha, PyTorch's 1/6 and a negative slope (alpha, beta as
// float bits in i[0], i[1]); inputs in [-8, 8] reach both flat pieces. hard_swish and its gradient likewise.
void hard_activation_cases(std::vector<OpCaseSpec>& out) {
  const float params[][2] = {{0.2f, 0.5f}, {1.0f / 6.0f, 0.5f}, {-0.3f, 0.1f}};
  const char* names[] = {"onnx", "torch", "neg"};
  for (int k = 0; k < 3; ++k)
    for (const Shape& s : kElementwise) {
      const std::array<int64_t, kMaxIntAttrs> i{float_attr_bits(params[k][0]), float_attr_bits(params[k][1])};
      const std::string name = std::string(names[k]) + "_" + dims_str(s);
      out.push_back(make("hard_sigmoid_" + name, OpKind::hard_sigmoid, {s, s}, {R, W}, i, 0.0f, 8.0f));
      out.push_back(make("hard_sigmoid_grad_" + name, OpKind::hard_sigmoid_grad, {s, s, s}, {R, R, W}, i, 0.0f, 8.0f));
    }
  same_shape_cases(out, OpKind::hard_swish, "hard_swish", 1, 8.0f);
  same_shape_cases(out, OpKind::hard_swish, "hard_swish", 1, 200.0f, "_large");
  same_shape_cases(out, OpKind::hard_swish_grad, "hard_swish_grad", 2, 8.0f);
}

}  // namespace

std::vector<OpCaseSpec> all_op_cases() {
  std::vector<OpCaseSpec> out;
  matmul_cases(out);
  same_shape_cases(out, OpKind::add, "add", 2);
  bias_add_cases(out);
  same_shape_cases(out, OpKind::sub, "sub", 2);
  same_shape_cases(out, OpKind::mul, "mul", 2);
  same_shape_cases(out, OpKind::sigmoid, "sigmoid", 1);
  same_shape_cases(out, OpKind::sigmoid, "sigmoid", 1, 200.0f, "_large");
  same_shape_cases(out, OpKind::sigmoid_grad, "sigmoid_grad", 2);
  same_shape_cases(out, OpKind::tanh, "tanh", 1);
  same_shape_cases(out, OpKind::tanh, "tanh", 1, 200.0f, "_large");
  same_shape_cases(out, OpKind::tanh_grad, "tanh_grad", 2);
  same_shape_cases(out, OpKind::relu, "relu", 1);
  same_shape_cases(out, OpKind::relu_grad, "relu_grad", 2);
  concat_split_cases(out);
  slice_cases(out);
  sum_cases(out);
  softmax_cases(out);
  sgd_cases(out);
  lstm_cell_cases(out);
  ew_chain_cases(out);
  conv_cases(out);
  pool_cases(out);
  add_n_cases(out);
  sgd_momentum_cases(out);
  reshape_cases(out);
  embedding_cases(out);
  reduce_sum_cases(out);
  same_shape_cases(out, OpKind::logistic_xent, "logistic_xent", 2);
  same_shape_cases(out, OpKind::logistic_xent, "logistic_xent", 2, 30.0f, "_large");
  same_shape_cases(out, OpKind::logistic_xent_grad, "logistic_xent_grad", 3);
  group_cases(out);
  phased_gate_cases(out);
  leaky_relu_cases(out);
  same_shape_cases(out, OpKind::gelu, "gelu", 1);
  same_shape_cases(out, OpKind::gelu, "gelu", 1, 200.0f, "_large");
  same_shape_cases(out, OpKind::gelu_grad, "gelu_grad", 2);
  same_shape_cases(out, OpKind::gelu_grad, "gelu_grad", 2, 30.0f, "_large");
  hard_activation_cases(out);
  for (OpCaseSpec& c : norm_op_cases()) out.push_back(std::move(c));
  for (OpCaseSpec& c : broadcast_op_cases()) out.push_back(std::move(c));
  for (OpCaseSpec& c : optim_op_cases()) out.push_back(std::move(c));
  for (OpCaseSpec& c : rnn_op_cases()) out.push_back(std::move(c));
  for (auto& c : conv_pool_op_cases()) out.push_back(std::move(c));
  for (OpCaseSpec& c : shape_op_cases()) out.push_back(std::move(c));
  return out;
}

}  // namespace corun::codelets::testing
