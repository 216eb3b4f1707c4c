// The plan step's kernel choice (engine/kernel_choice.cpp): every node of an op with an implementation list
// (the convolution passes, matmul and batch_matmul) gets the list's choice under the Config's preferences in
// its call (OpCall::impl), once; CORUN_VERBOSE=kernels prints one line per node with the choice and why each
// entry before it declined; the perfmodel footprint keeps the two products' libraries apart. No StarPU runs.
#include <corun/engine.hpp>

#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/matmul/gemm_impls.hpp"
#include "codelets/starpu/codelets.hpp"
#include "graphs/graph_impl.hpp"

#include <gtest/gtest.h>

#include <string>

namespace corun {
namespace {

using codelets::GemmImpl;
using codelets::GemmPreference;
using codelets::OpKind;

bool have_onednn() { return codelets::onednn_gemm_declines({}, GemmPreference::onednn).empty(); }

// A two-layer perceptron trained by SGD: forward A*B products, and in the backward A^T*B (weight gradients)
// and A*B^T (the hidden layer's input gradient).
struct Mlp {
  Graph g;
  Mlp() {
    const Tensor x = g.input("x", {4, 8}), targets = g.input("targets", {4, 5});
    const Tensor h = g.relu(g.matmul(x, g.param("w1", {8, 16}), false, false, "mm1"), "h");
    const Tensor y = g.matmul(h, g.param("w2", {16, 5}), false, false, "mm2");
    g.backward(g.softmax_xent(y, targets, "loss"), {.learning_rate = 0.1f});
  }
};

Config kernels_config(const std::string& gemm) {
  Config c;
  c.parallel_ops = false;
  c.gemm_kernel = gemm;
  c.verbose_kernels = true;
  return c;
}

std::string prefix(const detail::Node& n) {
  return "corun: kernels: " + std::string(codelets::op_info(n.call.kind).name) + " '" + n.name + "' " +
         n.call.shapes[0].str() + " x " + n.call.shapes[1].str() + ": ";
}

TEST(KernelChoice, VerboseKernelsPrintsEachProductsChoiceAndItsDeclines) {
  Mlp m;
  ::testing::internal::CaptureStderr();
  apply_graph_passes(m.g, kernels_config("openblas"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  const std::string why = have_onednn() ? "CORUN_GEMM_KERNEL=openblas" : "this build has no oneDNN (libdnnl-dev)";
  int products = 0;
  for (const detail::Node& n : m.g.impl().nodes) {
    if (n.call.kind != OpKind::matmul) continue;
    ++products;
    EXPECT_EQ(codelets::gemm_impl_of(n.call), GemmImpl::openblas) << n.name;
    const std::string line = prefix(n) + "openblas (declined: onednn: " + why + ")\n";
    EXPECT_NE(err.find(line), std::string::npos) << line << "not in:\n" << err;
  }
  EXPECT_GE(products, 5);  // mm1, mm2, dW1, dW2, dH
  size_t lines = 0;
  for (size_t at = err.find("corun: kernels: "); at != std::string::npos; at = err.find("corun: kernels: ", at + 1))
    ++lines;
  EXPECT_EQ(lines, static_cast<size_t>(products)) << err;
  // Chosen once: a second plan step chooses nothing again and says nothing.
  ::testing::internal::CaptureStderr();
  apply_graph_passes(m.g, kernels_config("onednn"));
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  for (const detail::Node& n : m.g.impl().nodes) {
    if (n.call.kind == OpKind::matmul) {
      EXPECT_EQ(codelets::gemm_impl_of(n.call), GemmImpl::openblas) << n.name;
    }
  }
}

TEST(KernelChoice, AutoChoosesByTheTransposesAndTheLinesSaySo) {
  Mlp m;
  ::testing::internal::CaptureStderr();
  apply_graph_passes(m.g, kernels_config("auto"));
  const std::string err = ::testing::internal::GetCapturedStderr();
  for (const detail::Node& n : m.g.impl().nodes) {
    const auto shape = codelets::gemm_shape_of(n.call);
    if (!shape) continue;
    const codelets::GemmChoice c = codelets::choose_gemm(*shape, GemmPreference::auto_);
    EXPECT_EQ(codelets::gemm_impl_of(n.call), c.impl) << n.name;
    const std::string line = prefix(n) + codelets::gemm_impl_name(c.impl) +
                             (c.declined.empty() ? "\n" : " (declined: onednn: " + c.declined[0].second + ")\n");
    EXPECT_NE(err.find(line), std::string::npos) << line << "not in:\n" << err;
  }
}

TEST(KernelChoice, VerboseKernelsPrintsTheConvolutionsToo) {
  Graph g;
  Conv2dOptions o;
  o.pad_top = o.pad_left = o.pad_bottom = o.pad_right = 1;
  g.conv2d(g.input("x", {2, 8, 8, 8}), g.param("w", {8, 8, 3, 3}), Tensor(), o, "conv");
  Config c = kernels_config("auto");
  c.conv_kernel = "im2col";
  ::testing::internal::CaptureStderr();
  apply_graph_passes(g, c);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("corun: kernels: conv2d 'conv' [2, 8, 8, 8] x [8, 8, 3, 3]: im2col (declined: onednn-winograd: "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("; direct: not depthwise"), std::string::npos) << err;
  EXPECT_EQ(codelets::conv_impl_of(g.impl().nodes[0].call), codelets::ConvImpl::im2col);
}

// The per-width models keep the two libraries' timings apart: a product on oneDNN has its own footprint, an
// unchosen call has the footprint of the choice under auto.
TEST(KernelChoice, TheFootprintKeepsTheLibrariesApart) {
  Mlp m;
  const codelets::OpCall& mm = m.g.impl().nodes[0].call;
  ASSERT_EQ(mm.kind, OpKind::matmul);
  codelets::OpCall blas = mm, dnnl = mm, automatic = mm;
  codelets::choose_gemm_impl(blas, GemmPreference::openblas);
  codelets::choose_gemm_impl(dnnl, GemmPreference::onednn);
  codelets::choose_gemm_impl(automatic, GemmPreference::auto_);
  EXPECT_EQ(codelets::footprint(mm), codelets::footprint(automatic));
  if (have_onednn())
    EXPECT_NE(codelets::footprint(blas), codelets::footprint(dnnl));
  else
    EXPECT_EQ(codelets::footprint(blas), codelets::footprint(dnnl));
}

}  // namespace
}  // namespace corun
