// The products' implementation list (codelets/matmul/gemm_impls.hpp): a product runs the first entry that takes
// it, each entry before it says why it declined, the preference (CORUN_GEMM_KERNEL) and the transposes decide,
// never the width, and a call keeps what the plan step chose for it.
#include "codelets/matmul/gemm_impls.hpp"
#include "codelets/matmul/openblas_core.hpp"

#include <gtest/gtest.h>

#include <string>

namespace corun::codelets {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Whether this build runs oneDNN's sgemm at all (it takes every product when asked to).
bool have_onednn() { return onednn_gemm_declines(GemmShape{}, GemmPreference::onednn).empty(); }

OpCall matmul_call(bool trans_a, bool trans_b) {
  OpCall c;
  c.kind = OpKind::matmul;
  c.shapes = {trans_a ? Shape{32, 64} : Shape{64, 32}, trans_b ? Shape{48, 32} : Shape{32, 48}, Shape{64, 48}};
  c.modes = {Access::read, Access::read, Access::write};
  c.i[0] = trans_a, c.i[1] = trans_b;
  return c;
}

TEST(GemmImplList, TheEntriesInOrderAndTheirNames) {
  ASSERT_EQ(gemm_impls().size(), 2u);
  EXPECT_STREQ(gemm_impls()[0].name, "onednn");
  EXPECT_STREQ(gemm_impls()[1].name, "openblas");
  EXPECT_STREQ(gemm_impl_name(GemmImpl::onednn), "onednn");
  EXPECT_STREQ(gemm_impl_name(GemmImpl::unchosen), "unchosen");
  EXPECT_EQ(parse_gemm_kernel("onednn"), GemmPreference::onednn);
  EXPECT_EQ(parse_gemm_kernel("openblas"), GemmPreference::openblas);
  EXPECT_EQ(parse_gemm_kernel("auto"), GemmPreference::auto_);
}

TEST(GemmImplList, ForcedPreferencesAndTheirReasons) {
  const GemmShape ab{false, false, 64, 48, 32};
  const GemmChoice blas = choose_gemm(ab, GemmPreference::openblas);
  EXPECT_EQ(blas.impl, GemmImpl::openblas);
  ASSERT_EQ(blas.declined.size(), 1u);
  EXPECT_STREQ(blas.declined[0].first, "onednn");
  EXPECT_EQ(blas.declined[0].second,
            have_onednn() ? "CORUN_GEMM_KERNEL=openblas" : "this build has no oneDNN (libdnnl-dev)");
  const GemmChoice dnnl = choose_gemm(GemmShape{false, true, 64, 48, 32}, GemmPreference::onednn);
  EXPECT_EQ(dnnl.impl, have_onednn() ? GemmImpl::onednn : GemmImpl::openblas);
  EXPECT_EQ(dnnl.declined.empty(), have_onednn());
  EXPECT_NE(gemm_description(GemmPreference::openblas).find("OpenBLAS for every product"), std::string::npos);
}

TEST(GemmImplList, AutoFollowsTheTransposeRule) {
  const GemmChoice nn = choose_gemm(GemmShape{false, false, 64, 48, 32}, GemmPreference::auto_);
  const GemmChoice nt = choose_gemm(GemmShape{false, true, 64, 48, 32}, GemmPreference::auto_);
  // The transposes of A never matter, nor do the sizes (the rule was measured on matmul_fast's tiles).
  EXPECT_EQ(choose_gemm(GemmShape{true, false, 7, 3, 5}, GemmPreference::auto_).impl, nn.impl);
  EXPECT_EQ(choose_gemm(GemmShape{true, true, 1000, 2, 9}, GemmPreference::auto_).impl, nt.impl);
  // A*B and A^T*B go to oneDNN on AVX-512; A*B^T stays on OpenBLAS, unless OpenBLAS runs kernels older than
  // the CPU (a CPU it did not recognise): then every product runs oneDNN (where the build has it).
  if (have_onednn() && openblas_kernels_older_than_cpu()) {
    EXPECT_EQ(nt.impl, nn.impl);
  } else if (nn.impl == GemmImpl::onednn) {
    EXPECT_EQ(nt.impl, GemmImpl::openblas);
    ASSERT_EQ(nt.declined.size(), 1u);
    EXPECT_TRUE(contains(nt.declined[0].second, "A*B^T")) << nt.declined[0].second;
    EXPECT_TRUE(contains(gemm_description(GemmPreference::auto_), "OpenBLAS for A*B^T"));
  } else {  // no oneDNN, or no AVX-512 kernels in it: OpenBLAS everywhere, and the same reason for both
    EXPECT_EQ(nt.impl, GemmImpl::openblas);
    ASSERT_EQ(nn.declined.size(), 1u);
    EXPECT_EQ(nn.declined[0].second, nt.declined[0].second);
    EXPECT_TRUE(contains(nn.declined[0].second, have_onednn() ? "AVX-512" : "no oneDNN")) << nn.declined[0].second;
  }
}

TEST(GemmImplList, ProductShapesOfTheCalls) {
  const auto s = gemm_shape_of(matmul_call(true, false));
  ASSERT_TRUE(s.has_value());
  EXPECT_TRUE(s->trans_a);
  EXPECT_FALSE(s->trans_b);
  EXPECT_EQ(s->m, 64);
  EXPECT_EQ(s->n, 48);
  EXPECT_EQ(s->k, 32);
  EXPECT_EQ(s->batch, 1);
  OpCall bmm;
  bmm.kind = OpKind::batch_matmul;
  bmm.shapes = {{3, 4, 8, 5}, {5, 6}, {3, 4, 8, 6}};
  const auto b = gemm_shape_of(bmm);
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->batch, 12);
  EXPECT_EQ(b->k, 5);
  OpCall add;
  add.kind = OpKind::add;
  EXPECT_FALSE(gemm_shape_of(add).has_value());
  EXPECT_EQ(gemm_impl_of(add), GemmImpl::unchosen);
  EXPECT_FALSE(call_uses_onednn_gemm(add));
}

// A call keeps what was chosen for it; an unchosen one runs the choice under auto; a group's members are chosen
// with it.
TEST(GemmImplList, ACallKeepsItsChoice) {
  OpCall call = matmul_call(false, false);
  const GemmImpl automatic = choose_gemm(*gemm_shape_of(call), GemmPreference::auto_).impl;
  EXPECT_EQ(gemm_impl_of(call), automatic);
  EXPECT_EQ(call_uses_onednn_gemm(call), automatic == GemmImpl::onednn);
  choose_gemm_impl(call, GemmPreference::openblas);
  EXPECT_EQ(gemm_impl_of(call), GemmImpl::openblas);
  EXPECT_FALSE(call_uses_onednn_gemm(call));
  OpCall group;
  group.kind = OpKind::group;
  group.members = {matmul_call(false, false), matmul_call(true, false)};
  choose_gemm_impl(group, GemmPreference::onednn);
  EXPECT_EQ(group.impl, 0);
  for (const OpCall& m : group.members)
    EXPECT_EQ(gemm_impl_of(m), have_onednn() ? GemmImpl::onednn : GemmImpl::openblas);
}

}  // namespace
}  // namespace corun::codelets
