// The conv, pooling, softmax cross-entropy and shape-op kernels, reference and fast, against outputs NumPy
// computed from the textbook definitions (numpy_fixtures/, written by make_numpy_fixtures.py, which states the
// conventions). test_ops compares the fast kernels with the reference ones; a convention both got wrong in
// the same way (padding, stride, tie-breaking, the divisor of a padded average) passes there and fails here.
#include "codelets/op.hpp"

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
};

// gtest prints a parameter on failure; the name says which.
void PrintTo(const Fixture& f, std::ostream* os) {
  *os << f.name;
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
  f.push_back({"softmax_xent", "xent", OpKind::softmax_xent, {}, {"z", "t", "p", "loss"}, 2});
  f.push_back({"softmax_xent_grad", "xent", OpKind::softmax_xent_grad, {}, {"p", "t", "dl", "dz"}, 1});
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
  for (size_t b = 0; b < fx.buffers.size(); ++b) {
    arrays.push_back(load_npy(std::string(CORUN_NUMPY_FIXTURES) + "/" + fx.file + "." + fx.buffers[b] + ".npy"));
    call.shapes.push_back(arrays.back().shape);
    call.modes.push_back(b + fx.outputs >= fx.buffers.size() ? Access::write : Access::read);
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
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, NumpyFixture, ::testing::ValuesIn(fixtures()),
                         [](const ::testing::TestParamInfo<Fixture>& p) { return p.param.name; });

}  // namespace
}  // namespace corun::codelets
