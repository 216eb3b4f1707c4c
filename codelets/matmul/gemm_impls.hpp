// The products' implementations as an ordered list, like the convolution's (conv2d/conv_impls.hpp): a product
// (matmul, batch_matmul: every op whose fast kernel calls sgemm_rowmajor) runs the first entry that takes it,
// and each entry before it says why it does not.
//
//   onednn    oneDNN's dnnl_sgemm, its OpenMP team bounded to the calling worker (where it was measured faster)
//   openblas  OpenBLAS's cblas_sgemm, pinned to one thread (takes every call)
// (The reference kernel, CORUN_KERNELS=ref, replaces the fast path of every op at once: it is not a list entry.)
//
// Why two libraries (issue 18 item 2): the per-step GEMMs of an RNN ran at 50-80 GF/s under OpenBLAS's AVX2
// kernels on an AVX-512 core where oneDNN's sgemm reached 100-160 (bench/gemm_kernels.sh,
// bench/results/gemm-kernels-*.md). The choice depends on the transposes, oneDNN's ISA and what
// CORUN_GEMM_KERNEL prefers, never on the team width, the policy or a timing, so a tile of C is the same call,
// with the same bits, whoever runs it (matmul_fast.cpp's tiling argument). The two libraries round
// differently, as two CPUs do. The engine's plan step chooses once per node (OpCall::impl) and
// CORUN_VERBOSE=kernels prints the choice and the declines; a call nobody chose for (an op harness call, a
// graph run without the plan step) is chosen at run time under `auto`. Nothing here is process-wide state.
#pragma once

#include "codelets/op.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace corun::codelets {

/// A product implementation (OpCall::impl of matmul and batch_matmul).
enum class GemmImpl : uint8_t { unchosen = 0, onednn, openblas };

/// What CORUN_GEMM_KERNEL prefers: auto (the measured rule), or one library for every product.
enum class GemmPreference { auto_, onednn, openblas };

/// A product's geometry: C[m, n] = op(A)[m, k] op(B)[k, n], `batch` times (1 for matmul).
struct GemmShape {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
};

/// One entry of the list: its name and the reason it declines a call ("" when it takes it).
struct GemmImplEntry {
  GemmImpl impl;
  const char* name;
  std::string (*declines)(const GemmShape& s, GemmPreference preference);
};

/// The implementations in the order they are tried.
const std::vector<GemmImplEntry>& gemm_impls();

/// The implementation a product of shape `s` runs under `preference`, and why each one before it declined.
struct GemmChoice {
  GemmImpl impl = GemmImpl::openblas;
  std::vector<std::pair<const char*, std::string>> declined;  ///< (name, reason), in list order
};
GemmChoice choose_gemm(const GemmShape& s, GemmPreference preference);

/// The geometry of a product's call (matmul, batch_matmul), nullopt for other kinds.
std::optional<GemmShape> gemm_shape_of(const OpCall& call);

/// The implementation `call` runs: the one chosen for it (OpCall::impl), else the list's choice under `auto`.
/// GemmImpl::unchosen for a call that is not a product.
GemmImpl gemm_impl_of(const OpCall& call);

/// Sets `call.impl` (and its group members') to the list's choice under `preference`: the engine's plan step
/// for every node, and a test or benchmark that runs one library. Nothing for other kinds.
void choose_gemm_impl(OpCall& call, GemmPreference preference);

/// The name of `impl` ("onednn", "openblas").
const char* gemm_impl_name(GemmImpl impl);

/// CORUN_GEMM_KERNEL's value as a preference ("auto", "onednn", "openblas").
GemmPreference parse_gemm_kernel(const std::string& name);

/// Whether `call` is a product whose fast kernel runs oneDNN: its perfmodel footprint then differs from the
/// OpenBLAS one, so the per-width models keep the two libraries' timings apart.
bool call_uses_onednn_gemm(const OpCall& call);

/// "oneDNN 2.6.3 (avx512_core) for A*B and A^T*B, OpenBLAS for A*B^T": what `preference` gives the products,
/// for `corun info` and the benchmark tables.
std::string gemm_description(GemmPreference preference);

/// The onednn entry's reason, for the rule's own tests ("" when it takes the call).
std::string onednn_gemm_declines(const GemmShape& s, GemmPreference preference);

}  // namespace corun::codelets
