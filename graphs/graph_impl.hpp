// graphs/graph_impl.hpp — the graph's internal representation, shared by the builder, the autodiff, the
// DOT writer and the engine. Node order is creation order, which is a topological order and the order in
// which the engine submits tasks (StarPU derives the dependencies from the access modes in that order).
#pragma once

#include <corun/graph.hpp>

#include "codelets/op.hpp"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace corun::detail {

/// 64-byte aligned, zero-filled float buffer, allocated once.
struct HostBuffer {
  struct Free {
    // User-provided constructors: a default member initializer would keep the nested struct from being
    // default-constructible inside HostBuffer, which unique_ptr's default constructor needs.
    Free() noexcept : bytes(0) {}
    explicit Free(size_t b) noexcept : bytes(b) {}
    size_t bytes;  // what the buffer counts in the process's tensor bytes (set_tensor_memory_limit)
    void operator()(float* p) const;
  };
  std::unique_ptr<float, Free> ptr;
  int64_t n = 0;

  /// `name`: the value it is for, named when set_tensor_memory_limit refuses it.
  explicit HostBuffer(int64_t count, const std::string& name = "");
  float* get() const { return ptr.get(); }
};

struct Value {
  Shape shape;
  std::string name;
  ValueKind kind;
  int producer = -1;  ///< node that first writes it (-1 for inputs, params, constants)
  HostBuffer data;
  bool kept = false;        ///< the user reads it (Graph::keep, the loss): never fused away
  bool fused_away = false;  ///< an intermediate removed by fuse_elementwise (no buffer, no handle)
  int64_t channel_block = 0;  ///< 0: plain (NCHW); B: nChw<B>c, kept so between convolutions (Graph::block_layouts)
};

struct Node {
  std::string name;
  codelets::OpCall call;
  std::vector<int> buffers;  ///< value ids in buffer order (modes in call.modes)
  bool is_gradient = false;  ///< added by backward()
};

struct GraphImpl {
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::unordered_map<std::string, int> by_name;
  std::vector<int> grad_of;   ///< value id -> gradient value id (-1: none), filled by backward()
  bool has_backward = false;
  bool fused = false;         ///< fuse_elementwise() ran (backward() must come before it)
  bool grouped = false;       ///< group_parallel_ops() ran (backward() must come before it)
  bool activations_fused = false;  ///< fuse_conv_activation() fused one (an inference graph: no backward())
  bool layouts_blocked = false;    ///< block_layouts() blocked a tensor (an inference graph: no backward())
  /// The plan step's passes that already ran on this graph (engine apply_graph_passes), each at most once.
  static constexpr uint8_t kFoldBatchNorm = 1, kFuseConvActivation = 2, kBlockLayouts = 4, kInputProjection = 8;
  uint8_t plan_passes = 0;
  int bound_engines = 0;      ///< > 0 while an Engine has the values registered
  int optimizer_hyper = -1;   ///< the adam / sgd_wd nodes' hyper-parameter tensor (-1: none)
  BackwardOptions hyper_options;  ///< the backward's options when optimizer_hyper >= 0 (run_replicated's update)
  /// What backward() was called with and where the forward graph ended, so that a pass that must see the forward
  /// graph alone can still run in the plan step (graphs/passes/forward_rewrite.hpp).
  struct BackwardCall {
    int loss = -1;
    BackwardOptions options;
    size_t forward_nodes = 0, forward_values = 0;  ///< the graph backward() was called on
    size_t nodes = 0, values = 0;                  ///< right after it
    bool loss_was_kept = false;
  };
  std::optional<BackwardCall> backward_call;

  int add_value(const Shape& shape, std::string name, ValueKind kind);
  /// Appends a node; returns its index. `name` empty -> "<op>_<index>".
  int add_node(std::string name, codelets::OpCall call, std::vector<int> buffers, bool is_gradient);
  /// After a pass replaced or reordered nodes: every value's producer again, as add_node sets it.
  void recompute_producers();
  /// Unique node name from a user name or the op name.
  std::string node_name(const std::string& requested, const char* op) const;
  /// Throws the standard error for a value fuse_elementwise removed (`what`: the caller, e.g. "Engine::read").
  void check_not_fused_away(int value, const char* what) const;
  /// Throws the standard error for a value block_layouts() keeps in a blocked layout (the user's bytes are NCHW).
  void check_plain_layout(int value, const char* what) const;
};

}  // namespace corun::detail
