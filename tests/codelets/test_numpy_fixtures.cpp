// The conv, pooling, softmax cross-entropy, normalisation, broadcasting, reduce-over-axes and shape-op kernels,
// reference and fast, against outputs NumPy computed from the textbook definitions (numpy_fixtures/, written
// by make_numpy_fixtures.py, which states the conventions). test_ops compares the fast kernels with the
// reference ones; a convention both got wrong in the same way (padding, stride, tie-breaking, the divisor of a
// padded average, which dims a broadcast gradient sums) passes there and fails here.
#include "codelets/batch_norm/batch_norm.hpp"
#include "codelets/broadcast/broadcast.hpp"
#include "codelets/conv2d/conv2d.hpp"
#include "codelets/op.hpp"
#include "codelets/pool/pool.hpp"

#include <corun/npy.hpp>

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#ifndef CORUN_NUMPY_FIXTURES
#error "CORUN_NUMPY_FIXTURES must be defined to tests/codelets/numpy_fixtures"
#endif

namespace corun::codelets {
namespace {

struct Fixture {
  std::string name;  ///< test name
  std::string file;  ///< numpy_fixtures/<file>.<buffer>.npy
  OpKind kind;
  std::array<int64_t, kMaxIntAttrs> i;  ///< the op's integer attributes
  std::vector<std::string> buffers;     ///< the op's buffers in order, by fixture name
  size_t outputs;                       ///< the last `outputs` buffers are written and compared
  float f = 0.0f;                       ///< the op's float attribute
  std::vector<size_t> updated = {};     ///< readwrite buffers, checked against <file>.<buffer>_after.npy
};

// gtest prints a parameter on failure; the name says which.
void PrintTo(const Fixture& f, std::ostream* os) {
  *os << f.name;
}

// The general forms (issue 19), with the attributes make_numpy_fixtures.py used for them.
void general_fixtures(std::vector<Fixture>& f) {
  struct Conv {
    const char* file;
    ConvParams p;
    bool bias;
  };
  for (const Conv& c : {Conv{"convg_g2_d2x1_s2x1", {2, 1, 1, 0, 2, 1, 2, 1, 2}, true},
                        Conv{"convg_dw_mult2", {1, 2, 1, 1, 0, 2, 1, 2, 3}, false}}) {
    const std::string file = c.file;
    const auto a = c.p.attrs();
    f.push_back({file + "_forward", file, OpKind::conv2d, a,
                 c.bias ? std::vector<std::string>{"x", "w", "b", "y"} : std::vector<std::string>{"x", "w", "y"}, 1});
    f.push_back({file + "_grad_data", file, OpKind::conv2d_grad_data, a, {"dy", "w", "dx"}, 1});
    f.push_back({file + "_grad_filter", file, OpKind::conv2d_grad_filter, a,
                 c.bias ? std::vector<std::string>{"x", "dy", "dw", "db"} : std::vector<std::string>{"x", "dy", "dw"},
                 c.bias ? size_t{2} : size_t{1}});
  }
  for (const Conv& c : {Conv{"convt_k4s2p1", {2, 2, 1, 1, 1, 1, 1, 1, 1}, true},
                        Conv{"convt_g2_d2_op1", {2, 1, 0, 1, 1, 0, 2, 1, 2}, false}}) {
    const std::string file = c.file;
    f.push_back({file + "_forward", file, OpKind::conv_transpose2d, c.p.attrs(),
                 c.bias ? std::vector<std::string>{"x", "w", "b", "y"} : std::vector<std::string>{"x", "w", "y"}, 1});
    if (c.bias) f.push_back({file + "_grad_bias", file, OpKind::conv_transpose2d_grad_bias, {}, {"dy", "db"}, 1});
  }
  struct Pool {
    const char* file;
    PoolParams p;
  };
  for (const Pool& q : {Pool{"poolg_ceil_k3x2_include", {3, 2, 2, 2, 1, 0, 1, 1, true, true}},
                        Pool{"poolg_ceil_k3_exclude", {3, 3, 2, 3, 0, 1, 0, 1, true, false}}}) {
    const std::string file = q.file;
    const auto a = q.p.attrs();
    f.push_back({file + "_max", file, OpKind::max_pool, a, {"x", "ymax"}, 1});
    f.push_back({file + "_max_grad", file, OpKind::max_pool_grad, a, {"x", "dymax", "dxmax"}, 1});
    f.push_back({file + "_avg", file, OpKind::avg_pool, a, {"x", "yavg"}, 1});
    f.push_back({file + "_avg_grad", file, OpKind::avg_pool_grad, a, {"dyavg", "dxavg"}, 1});
  }
}

std::vector<Fixture> fixtures() {
  std::vector<Fixture> f;
  for (const auto& [file, stride, pad] : {std::tuple{"conv_s2p1", 2, 1}, std::tuple{"conv_s1p2", 1, 2}}) {
    const std::array<int64_t, kMaxIntAttrs> a{stride, pad, 0, 0};
    f.push_back({std::string(file) + "_forward", file, OpKind::conv2d, a, {"x", "w", "b", "y"}, 1});
    f.push_back({std::string(file) + "_grad_data", file, OpKind::conv2d_grad_data, a, {"dy", "w", "dx"}, 1});
    f.push_back({std::string(file) + "_grad_filter", file, OpKind::conv2d_grad_filter, a, {"x", "dy", "dw", "db"}, 2});
  }
  for (const auto& [file, kernel, stride, pad] :
       {std::tuple{"pool_k3s2p1", 3, 2, 1}, std::tuple{"pool_k2s2p0", 2, 2, 0}}) {
    const std::array<int64_t, kMaxIntAttrs> a{kernel, stride, pad, 0};
    f.push_back({std::string(file) + "_max", file, OpKind::max_pool, a, {"x", "ymax"}, 1});
    f.push_back({std::string(file) + "_max_grad", file, OpKind::max_pool_grad, a, {"x", "dymax", "dxmax"}, 1});
    f.push_back({std::string(file) + "_avg", file, OpKind::avg_pool, a, {"x", "yavg"}, 1});
    f.push_back({std::string(file) + "_avg_grad", file, OpKind::avg_pool_grad, a, {"dyavg", "dxavg"}, 1});
  }
  general_fixtures(f);
  f.push_back({"softmax_xent", "xent", OpKind::softmax_xent, {}, {"z", "t", "p", "loss"}, 2});
  f.push_back({"softmax_xent_grad", "xent", OpKind::softmax_xent_grad, {}, {"p", "t", "dl", "dz"}, 1});
  // Normalisation (issue 19): batch_norm in training mode also updates its running statistics in place.
  const int64_t momentum = batch_norm_encode(0.9f);
  for (const auto& [file, training] :
       {std::pair{"bn_train4d", 1}, std::pair{"bn_train2d", 1}, std::pair{"bn_infer4d", 0}}) {
    const std::array<int64_t, kMaxIntAttrs> a{training, momentum};
    f.push_back({std::string(file) + "_forward", file, OpKind::batch_norm, a,
                 {"x", "scale", "bias", "rmean", "rvar", "y", "mean", "invstd"}, 3, 1e-5f,
                 training ? std::vector<size_t>{3, 4} : std::vector<size_t>{}});
    f.push_back({std::string(file) + "_grad", file, OpKind::batch_norm_grad, a,
                 {"x", "scale", "mean", "invstd", "dy", "dx", "dscale", "dbias"}, 3, 1e-5f});
  }
  for (const auto& [file, axis] : {std::pair{"ln_axis1", 1}, std::pair{"ln_last", 1}}) {
    const std::array<int64_t, kMaxIntAttrs> a{axis};
    f.push_back({std::string(file) + "_forward", file, OpKind::layer_norm, a,
                 {"x", "scale", "bias", "y", "mean", "invstd"}, 3, 1e-5f});
    f.push_back({std::string(file) + "_grad", file, OpKind::layer_norm_grad, a,
                 {"x", "scale", "mean", "invstd", "dy", "dx", "dscale", "dbias"}, 3, 1e-5f});
  }
  // Issue 19: numpy broadcasting (C and each operand's summed gradient) and reductions over axes.
  for (int64_t op = 0; op < 5; ++op) {
    const std::string file = std::string("bcast_") + binary_op_name(static_cast<BinaryOp>(op));
    f.push_back({file, file, OpKind::binary_bcast, {op}, {"a", "b", "c"}, 1});
    f.push_back({file + "_da", file, OpKind::binary_bcast_grad, {op, 0}, {"a", "b", "dc", "da"}, 1});
    f.push_back({file + "_db", file, OpKind::binary_bcast_grad, {op, 1}, {"a", "b", "dc", "db"}, 1});
  }
  // x is [2, 3, 4, 5]: {name, axes mask, the mean's 1 / count or 1}.
  for (const auto& [name, mask, scale] :
       {std::tuple{"mean23", 0b1100, 1.0f / 20}, std::tuple{"sum03", 0b1001, 1.0f},
        std::tuple{"meanall", 0b1111, 1.0f / 120}, std::tuple{"sum1", 0b0010, 1.0f}}) {
    const std::string n = name;
    f.push_back({"reduce_" + n, "reduce", OpKind::reduce_axes, {mask}, {"x", n}, 1, scale});
    f.push_back({"reduce_" + n + "_grad", "reduce", OpKind::reduce_axes_grad, {mask}, {"d" + n, "dx" + n}, 1, scale});
  }
  // issue 19 shape ops
  f.push_back({"transpose_p0231", "transpose_p0231", OpKind::transpose, {0, 2, 3, 1}, {"x", "y"}, 1});
  f.push_back({"transpose_p0132", "transpose_p0132", OpKind::transpose, {0, 1, 3, 2}, {"x", "y"}, 1});
  f.push_back({"softmax_a1", "softmax_a1", OpKind::softmax, {1}, {"x", "y"}, 1});
  f.push_back({"softmax_grad_a1", "softmax_a1", OpKind::softmax_grad, {1}, {"y", "dy", "dx"}, 1});
  f.push_back({"log_softmax_a1", "softmax_a1", OpKind::log_softmax, {1}, {"x", "logy"}, 1});
  f.push_back({"log_softmax_grad_a1", "softmax_a1", OpKind::log_softmax_grad, {1}, {"logy", "dy", "dlogx"}, 1});
  f.push_back({"batch_matmul_bcast", "bmm_bcast", OpKind::batch_matmul, {}, {"a", "b", "c"}, 1});
  f.push_back({"batch_matmul_bcast_grad_a", "bmm_bcast", OpKind::batch_matmul, {0, 1}, {"dc", "b", "da"}, 1});
  f.push_back({"batch_matmul_bcast_grad_b", "bmm_bcast", OpKind::batch_matmul, {1, 0}, {"a", "dc", "db"}, 1});
  return f;
}

class NumpyFixture : public ::testing::TestWithParam<Fixture> {};

// Every kernel (reference and fast) at team widths 1 and 2 (the members run one after the other: each
// computes its own slice).
TEST_P(NumpyFixture, KernelsMatchNumpy) {
  const Fixture& fx = GetParam();
  std::vector<NpyArray> arrays;
  OpCall call;
  call.kind = fx.kind;
  call.i = fx.i;
  call.f = fx.f;
  for (size_t b = 0; b < fx.buffers.size(); ++b) {
    arrays.push_back(load_npy(std::string(CORUN_NUMPY_FIXTURES) + "/" + fx.file + "." + fx.buffers[b] + ".npy"));
    call.shapes.push_back(arrays.back().shape);
    call.modes.push_back(b + fx.outputs >= fx.buffers.size() ? Access::write : Access::read);
  }
  std::vector<std::pair<size_t, NpyArray>> after;  // the updated buffers' expected contents
  for (size_t b : fx.updated) {
    call.modes[b] = Access::readwrite;
    const std::string file = std::string(CORUN_NUMPY_FIXTURES) + "/" + fx.file + "." + fx.buffers[b] + "_after.npy";
    after.emplace_back(b, load_npy(file));
  }
  const OpInfo& info = op_info(fx.kind);
  for (const auto& [which, kernel] : {std::pair{"ref", info.ref}, std::pair{"fast", info.fast}}) {
    for (int width : {1, 2}) {
      SCOPED_TRACE(std::string(which) + " kernel, width " + std::to_string(width));
      std::vector<std::vector<float>> data;
      std::vector<float*> ptrs;
      for (size_t b = 0; b < arrays.size(); ++b) {
        const bool out = call.modes[b] == Access::write;
        data.push_back(out ? std::vector<float>(arrays[b].data.size(), std::nanf("")) : arrays[b].data);
      }
      for (auto& d : data) ptrs.push_back(d.data());
      for (int rank = 0; rank < width; ++rank) kernel(call, ptrs.data(), rank, width);
      for (size_t b = fx.buffers.size() - fx.outputs; b < fx.buffers.size(); ++b)
        for (size_t e = 0; e < data[b].size(); ++e) {
          const float want = arrays[b].data[e], got = data[b][e];
          ASSERT_NEAR(got, want, 2e-5 + 1e-5 * std::fabs(want)) << fx.buffers[b] << "[" << e << "]";
        }
      for (const auto& [b, want] : after)
        for (size_t e = 0; e < want.data.size(); ++e)
          ASSERT_NEAR(data[b][e], want.data[e], 2e-5 + 1e-5 * std::fabs(want.data[e]))
              << fx.buffers[b] << "[" << e << "] after the update";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, NumpyFixture, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<Fixture>& p) { return p.param.name; });

}  // namespace
}  // namespace corun::codelets
