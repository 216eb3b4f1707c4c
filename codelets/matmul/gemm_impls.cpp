// The products' ordered implementation list (gemm_impls.hpp) and the rule measured for `auto` behind the onednn
// entry's reasons. Transposes, oneDNN's ISA and the preference only, never the width.
#include "codelets/matmul/gemm_impls.hpp"

#include "codelets/matmul/openblas_core.hpp"
#include "codelets/onednn_runtime.hpp"

#ifdef CORUN_HAVE_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

namespace corun::codelets {

GemmPreference parse_gemm_kernel(const std::string& name) {
  return name == "onednn" ? GemmPreference::onednn : name == "openblas" ? GemmPreference::openblas : GemmPreference::auto_;
}

namespace {

#ifdef CORUN_HAVE_DNNL
// oneDNN's sgemm kernels on this CPU: AVX-512 (avx512_core and above) is where they were measured faster.
bool onednn_avx512() {
  static const bool avx512 = dnnl_get_effective_cpu_isa() >= dnnl_cpu_isa_avx512_core;
  return avx512;
}

// OpenBLAS on kernels without AVX2 (a CPU it did not recognise, openblas_core.hpp) while oneDNN has AVX2 or
// better: oneDNN for every product.
bool openblas_outclassed() {
  static const bool outclassed = openblas_kernels_older_than_cpu() && dnnl_get_effective_cpu_isa() >= dnnl_cpu_isa_avx2;
  return outclassed;
}

const char* onednn_isa_name() {
  switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx512_mic: case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    default: return "avx512_core_amx or later";
  }
}
#endif

std::string openblas_declines(const GemmShape&, GemmPreference) { return ""; }

}  // namespace

std::string onednn_gemm_declines(const GemmShape& s, GemmPreference preference) {
#ifdef CORUN_HAVE_DNNL
  if (preference == GemmPreference::openblas) return "CORUN_GEMM_KERNEL=openblas";
  if (preference == GemmPreference::onednn) return "";
  // auto, the rule bench/gemm_kernels.sh measured on the tiles matmul_fast cuts (one thread, quiet 2-core Zen 5,
  // bench/results/gemm-kernels-*.md): on AVX-512 oneDNN was 1.4-2.3x faster than OpenBLAS's kernels for A*B
  // (forward products) and 1.2-1.6x for A^T*B (weight gradients), but 0.7-1.1x for A*B^T (input gradients,
  // the weight read transposed); with AVX2 kernels only the two were within noise of each other.
  // And when OpenBLAS runs kernels older than the CPU (openblas_outclassed: 0.3.21 on a Xeon it took for a
  // Prescott), oneDNN for every product: 2.6-5.4x faster on all eleven tiles, A*B^T included
  // (bench/results/gemm-kernels-20261206-053517-prescott.md).
  if (openblas_outclassed()) return "";
  if (!onednn_avx512()) return "oneDNN's sgemm has no AVX-512 kernels here (with AVX2 within noise of OpenBLAS)";
  if (s.trans_b) return "A*B^T (an input gradient: 0.7-1.1x OpenBLAS's speed on AVX-512)";
  return "";
#else
  (void)s, (void)preference;
  return "this build has no oneDNN (libdnnl-dev)";
#endif
}

const std::vector<GemmImplEntry>& gemm_impls() {
  static const std::vector<GemmImplEntry> list{
      {GemmImpl::onednn, "onednn", onednn_gemm_declines},
      {GemmImpl::openblas, "openblas", openblas_declines},
  };
  return list;
}

const char* gemm_impl_name(GemmImpl impl) {
  for (const GemmImplEntry& e : gemm_impls())
    if (e.impl == impl) return e.name;
  return "unchosen";
}

GemmChoice choose_gemm(const GemmShape& s, GemmPreference preference) {
  GemmChoice c;
  for (const GemmImplEntry& e : gemm_impls()) {
    std::string why = e.declines(s, preference);
    if (why.empty()) {
      c.impl = e.impl;
      return c;
    }
    c.declined.emplace_back(e.name, std::move(why));
  }
  return c;  // openblas takes every call: not reached
}

std::optional<GemmShape> gemm_shape_of(const OpCall& call) {
  if (call.kind != OpKind::matmul && call.kind != OpKind::batch_matmul) return std::nullopt;
  if (call.shapes.size() < 3 || call.shapes[0].rank < 2 || call.shapes[2].rank < 2) return std::nullopt;
  const Shape& a = call.shapes[0];
  const Shape& c = call.shapes[2];
  GemmShape s;
  s.trans_a = call.i[0] != 0;
  s.trans_b = call.i[1] != 0;
  s.m = c[c.rank - 2];
  s.n = c[c.rank - 1];
  s.k = s.trans_a ? a[a.rank - 2] : a[a.rank - 1];
  s.batch = s.m * s.n > 0 ? c.numel() / (s.m * s.n) : 0;
  return s;
}

GemmImpl gemm_impl_of(const OpCall& call) {
  const auto s = gemm_shape_of(call);
  if (!s) return GemmImpl::unchosen;
  if (call.impl != 0) return static_cast<GemmImpl>(call.impl);
  return choose_gemm(*s, GemmPreference::auto_).impl;
}

void choose_gemm_impl(OpCall& call, GemmPreference preference) {
  for (OpCall& m : call.members) choose_gemm_impl(m, preference);
  if (const auto s = gemm_shape_of(call)) call.impl = static_cast<uint8_t>(choose_gemm(*s, preference).impl);
}

bool call_uses_onednn_gemm(const OpCall& call) { return gemm_impl_of(call) == GemmImpl::onednn; }

std::string gemm_description(GemmPreference preference) {
#ifdef CORUN_HAVE_DNNL
  const std::string onednn = onednn_version() + " (" + onednn_isa_name() + ")";
  const bool nn = choose_gemm(GemmShape{false, false}, preference).impl == GemmImpl::onednn;
  const bool nt = choose_gemm(GemmShape{false, true}, preference).impl == GemmImpl::onednn;
  if (nn && nt && preference == GemmPreference::auto_)
    return onednn + " for every product (OpenBLAS runs its " + openblas_core_name() + " kernels, older than the CPU)";
  if (nn && nt) return onednn + " for every product";
  if (nn) return onednn + " for A*B and A^T*B, OpenBLAS for A*B^T";
  return std::string("OpenBLAS for every product (") + onednn + " in the build)";
#else
  (void)preference;
  return "OpenBLAS for every product (built without oneDNN)";
#endif
}

}  // namespace corun::codelets
