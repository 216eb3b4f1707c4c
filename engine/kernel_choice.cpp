// The plan step's kernel choice (conv_kernel.hpp): each node of an op with an implementation list gets the
// list's first entry that takes it, under the Config's preferences, once; CORUN_VERBOSE=kernels prints the
// choice and why each entry before it declined. The lists: codelets/conv2d/conv_impls.hpp (the convolution
// passes), codelets/matmul/gemm_impls.hpp (matmul, batch_matmul).
#include "engine/conv_kernel.hpp"

#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/matmul/gemm_impls.hpp"
#include "codelets/op.hpp"
#include "graphs/graph_impl.hpp"

#include <cstdio>
#include <optional>
#include <utility>
#include <vector>

namespace corun::engine {

namespace {

// One node's choice in its op's list: the entry's id (OpCall::impl), its name, and the declines before it.
struct ListChoice {
  uint8_t impl = 0;
  const char* name = "";
  std::vector<std::pair<const char*, std::string>> declined;
};

struct ParsedPreferences {
  codelets::ConvKernel conv;
  codelets::GemmPreference gemm;
};

// The choice for `call` in its op's list; nullopt for an op without a list.
std::optional<ListChoice> list_choice(const codelets::OpCall& call, const ParsedPreferences& p) {
  if (const auto g = codelets::conv_pass_geometry(call)) {
    codelets::ConvChoice c = codelets::choose_conv(*g, call.kind, p.conv);
    return ListChoice{static_cast<uint8_t>(c.impl), codelets::conv_impl_name(c.impl), std::move(c.declined)};
  }
  if (const auto s = codelets::gemm_shape_of(call)) {
    codelets::GemmChoice c = codelets::choose_gemm(*s, p.gemm);
    return ListChoice{static_cast<uint8_t>(c.impl), codelets::gemm_impl_name(c.impl), std::move(c.declined)};
  }
  return std::nullopt;
}

// A group's members (and theirs), chosen one by one, silently: their nodes were printed before grouping.
void choose_members(codelets::OpCall& call, const ParsedPreferences& p) {
  for (codelets::OpCall& m : call.members) {
    choose_members(m, p);
    if (m.impl != 0) continue;
    if (const auto c = list_choice(m, p)) m.impl = c->impl;
  }
}

// "conv2d 'conv1' [32, 3, 64, 64] x [64, 3, 7, 7]: onednn (declined: onednn-winograd: not a 3x3 ...; ...)"
std::string kernel_line(const detail::Node& n, const ListChoice& c) {
  std::string line = std::string(codelets::op_info(n.call.kind).name) + " '" + n.name + "'";
  for (size_t b = 0; b < n.call.shapes.size() && b < 2; ++b) line += (b ? " x " : " ") + n.call.shapes[b].str();
  line += ": " + std::string(c.name);
  for (size_t i = 0; i < c.declined.size(); ++i)
    line += (i == 0 ? " (declined: " : "; ") + std::string(c.declined[i].first) + ": " + c.declined[i].second;
  return line + (c.declined.empty() ? "" : ")");
}

}  // namespace

int choose_kernels(Graph& graph, const KernelPreferences& preferences, bool verbose) {
  const ParsedPreferences p{codelets::parse_conv_kernel(preferences.conv),
                            codelets::parse_gemm_kernel(preferences.gemm)};
  int chosen = 0;
  for (detail::Node& n : graph.impl().nodes) {
    choose_members(n.call, p);
    if (n.call.impl != 0) continue;
    const std::optional<ListChoice> c = list_choice(n.call, p);
    if (!c) continue;
    n.call.impl = c->impl;
    ++chosen;
    if (verbose) std::fprintf(stderr, "corun: kernels: %s\n", kernel_line(n, *c).c_str());
  }
  return chosen;
}

}  // namespace corun::engine
