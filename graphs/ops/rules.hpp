// graphs/ops/rules.hpp — what the graph layer knows of an op: its shape rule and its backward rule.
//
// Each op built by Graph has one file graphs/ops/<op>.cpp defining `const OpRules <op>_rules` (a row of
// codelets/ops.def with graph_rules = 1) and, for most ops, its public builder, which is one call of
// build(). registry.cpp reaches every <op>_rules through the same list, so the linker keeps them all (no
// self-registration through static initialisers, which a static library would drop).
#pragma once

#include <corun/graph.hpp>

#include "codelets/op.hpp"
#include "graphs/graph_impl.hpp"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace corun::graphs {

class GradContext;  // graphs/ops/backward.hpp

/// What a shape rule sees of the node being built. Operand shapes are in buffer order.
struct ShapeQuery {
  codelets::OpKind kind;
  const std::string& node;
  const std::vector<Shape>& in;
  const std::array<int64_t, codelets::kMaxIntAttrs>& i;
  float f;
  const std::vector<int64_t>& extents;  ///< a list attribute (split's piece sizes), else empty

  /// Throws the standard shape-mismatch error: op, node name, what is wrong, both shapes.
  [[noreturn]] void mismatch(const std::string& what, const char* a_label, const Shape& a, const char* b_label,
                             const Shape& b) const;
  /// Throws "<op> '<node>': <what>".
  [[noreturn]] void fail(const std::string& what) const;
  /// Throws unless 0 <= dim < s.rank.
  void check_dim(int dim, const Shape& s) const;
};

struct OpRules {
  /// The output shapes of a node with these operands and attributes; throws corun::Error on bad input.
  std::vector<Shape> (*shapes)(const ShapeQuery& q);
  /// Turns the gradients of the node's outputs into contributions to its inputs' gradients (nullptr: the op
  /// has no gradient, backward() refuses a loss that depends on it).
  void (*backward)(GradContext& ctx);
};

/// The rules of `kind`, or nullptr for ops no builder creates (gradient ops, ew_chain, group, sgd).
const OpRules* op_rules(codelets::OpKind kind);

// One declaration per row of codelets/ops.def with graph_rules = 1; graphs/ops/<op>.cpp defines it.
#define CORUN_GRAPH_RULES_0(name)
#define CORUN_GRAPH_RULES_1(name) extern const OpRules name##_rules;
#define CORUN_OP(name, max_width, groupable, ew_arity, colour, graph_rules) CORUN_GRAPH_RULES_##graph_rules(name)
#include "codelets/ops.def"
#undef CORUN_OP
#undef CORUN_GRAPH_RULES_0
#undef CORUN_GRAPH_RULES_1

/// The operands and attributes of a node to build.
struct NodeArgs {
  NodeArgs(std::vector<Tensor> operands_, std::array<int64_t, codelets::kMaxIntAttrs> i_ = {}, float f_ = 0.0f,
           std::vector<int64_t> extents_ = {})
      : operands(std::move(operands_)), i(i_), f(f_), extents(std::move(extents_)) {}

  std::vector<Tensor> operands;  ///< in buffer order
  std::array<int64_t, codelets::kMaxIntAttrs> i;
  float f;
  std::vector<int64_t> extents;  ///< see ShapeQuery::extents
};

/// The one path every builder takes: the node name (`name`, or "<op>_<index>"), a check of every operand,
/// the op's shape rule, fresh output values and the node (named node + `suffix`). Returns the outputs; a
/// single output is also found by the node's name (Graph::find).
std::vector<Tensor> build(Graph& graph, codelets::OpKind kind, const NodeArgs& args, const std::string& name,
                          const char* suffix = "");

/// build() of a one-output node.
inline Tensor build1(Graph& graph, codelets::OpKind kind, const NodeArgs& args, const std::string& name) {
  return build(graph, kind, args, name)[0];
}

/// A copy of `s` with dimension `dim` of extent `extent`.
Shape with_dim(const Shape& s, int dim, int64_t extent);
/// `s` without dimension `dim` ([1] for a 1-D shape).
Shape without_dim(const Shape& s, int dim);

}  // namespace corun::graphs
