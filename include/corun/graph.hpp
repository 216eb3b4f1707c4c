// corun/graph.hpp — describing a computation graph.
//
// A Graph is built once and run many times by a corun::Engine (one submission of all its nodes per
// Engine::run). Building checks every shape as the node is added: a mismatch throws corun::Error naming the
// op, the node and both shapes.
//
//   corun::Graph g;
//   auto x = g.input("x", {64, 128});
//   auto t = g.input("t", {64, 10});          // one-hot targets
//   auto w = g.param("w", {128, 10});
//   auto b = g.param("b", {10});
//   auto loss = g.softmax_xent(g.add(g.matmul(x, w), b), t, "loss");
//   g.backward(loss, {.learning_rate = 0.1f});  // gradient nodes + SGD updates: one training step
//   std::cout << g.dump_dot();
//
// Values are f32, C order, up to 4-D. Every value owns a 64-byte aligned host buffer allocated once when
// it is created (zero-filled). Before the graph is bound to an Engine, data(t) gives direct access; after,
// use Engine::read / Engine::write, which synchronise with the runtime.
#pragma once

#include <corun/tensor.hpp>
#include <corun/window_options.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace corun {

namespace detail {
struct GraphImpl;
}

/// What a value is; decides how the engine and the autodiff treat it.
enum class ValueKind {
  input,       ///< written by the user before each run (data, targets, initial states)
  param,       ///< trainable: gets a gradient and an SGD update from backward()
  constant,    ///< fixed content set at creation (ones, zeros) used by gradient nodes
  activation,  ///< produced by a forward node
  gradient,    ///< produced by a gradient node
  state,       ///< optimizer state updated in place by the update nodes (SGD momentum's velocity); saved
               ///< with the parameters by checkpoints (Graph::optimizer_state)
};

/// The update rule Graph::backward appends (BackwardOptions::optimizer).
enum class Optimizer { sgd, adam, adamw };

/// Options of Graph::backward.
struct BackwardOptions {
  bool sgd_update = true;        ///< append `param -= learning_rate * grad` for every parameter
  float learning_rate = 0.1f;    ///< SGD step (change later with Graph::set_learning_rate)
  /// 0: plain SGD. > 0: SGD with momentum (V = momentum V + G; W -= learning_rate V, as PyTorch), with one
  /// zero-initialised velocity per parameter, named "<param>.velocity" (Graph::optimizer_state). With
  /// sgd_update = false the velocities are still created (no update nodes): the state of an update applied
  /// outside the graph, e.g. by Engine::run_replicated at the root replica.
  float momentum = 0.0f;
  /// @name Optimizers (issue 19; PyTorch's torch.optim semantics)
  /// sgd with weight_decay == 0 and nesterov off keeps the sgd / sgd_momentum nodes above (same bits as
  /// before). sgd with weight decay or Nesterov appends sgd_wd nodes (g += weight_decay W; V = momentum V
  /// + g; W -= lr (nesterov ? g + momentum V : V)). adam / adamw append adam nodes with zero-initialised
  /// moments "<param>.adam_m", "<param>.adam_v". Both read the learning rate and Adam's bias corrections
  /// from the state tensor "optimizer.hyper" (Graph::optimizer_hyper), which the caller writes before every
  /// run (Graph::optimizer_hyper_at), so a schedule needs no graph rebuild.
  ///@{
  Optimizer optimizer = Optimizer::sgd;
  float weight_decay = 0.0f;  ///< sgd, adam: L2 added to the gradient; adamw: decoupled (W -= lr wd W)
  bool nesterov = false;      ///< sgd only (needs momentum > 0, as PyTorch)
  float beta1 = 0.9f;         ///< adam, adamw: first-moment decay
  float beta2 = 0.999f;       ///< adam, adamw: second-moment decay
  float eps = 1e-8f;          ///< adam, adamw: added after the sqrt
  ///@}
  /// A parameter's gradient made of several products A_t^T dC_t (an RNN's weight over its time steps: A_t
  /// the step's input, dC_t its output's gradient) is computed as one product of the stacked operands,
  /// concat_0(A_t)^T concat_0(dC_t), for every group of contributions that together reach this many rows
  /// (K of the product), in the order the backward makes them; a lone contribution stays one product.
  /// A product with K = 64 rows ran at 58-68 GF/s on one core, with K = 320 at 88-94 (docs/models.md).
  /// The bits differ from one product per step within float rounding; they never depend on the width or
  /// the policy. 0: one product per contribution, accumulated in place (the bits of earlier versions).
  int64_t stack_weight_gradient_rows = 256;
  /// A tensor read untransposed as the B operand of at least this many products (an RNN weight W, once
  /// per time step) is transposed once by a transpose node of the backward, and the input gradients
  /// dA = dC W^T of those products read that copy as ordinary products dC (W^T): on AVX-512 oneDNN's A*B
  /// ran them at 80-88 GF/s on one core where A*B^T ran at 67-72 (docs/models.md, "Transposed once"). One
  /// copy of W per such tensor; the bits differ within float rounding, never with the width or the policy.
  /// 0: never (every dA = dC W^T a product with B transposed, the bits of earlier versions).
  int64_t transpose_reused_weight_uses = 8;
};

/// A computation graph of f32 tensors. Not copyable (values own their buffers). Movable: tensors and an
/// Engine's binding follow the graph's storage, so they stay valid; a moved-from Graph may only be destroyed
/// or assigned to.
class Graph {
 public:
  Graph();
  ~Graph();
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  /// @name Leaves
  /// Names must be unique among inputs and parameters (they are the file names of saved tensors).
  ///@{
  Tensor input(const std::string& name, const Shape& shape);
  Tensor param(const std::string& name, const Shape& shape);
  /// A fixed leaf (ValueKind::constant: never trained, never saved) of `shape` holding `fill` everywhere: a
  /// value known when the graph is built, such as an imported file's constant (write other contents with
  /// data()). `name` labels it in DOT and error messages only: find() does not look constants up, so the
  /// name need not be unique.
  Tensor constant(const std::string& name, const Shape& shape, float fill = 0.0f);
  ///@}

  /// @name Ops. `name` is optional; an unnamed node is called "<op>_<index>".
  ///@{
  /// C = op(A) * op(B) where op transposes when the flag is set. A, B must be 2-D with matching inner dims.
  Tensor matmul(Tensor a, Tensor b, bool trans_a = false, bool trans_b = false, const std::string& name = "");
  /// A + B with numpy / ONNX (Add) multidirectional broadcasting. Same shapes, or B 1-D of A's last extent
  /// (a bias over the rows of A), make an `add` node (ew_chain-fusable); other shapes that broadcast make a
  /// `binary_bcast` node.
  Tensor add(Tensor a, Tensor b, const std::string& name = "");
  /// A - B, numpy broadcasting (ONNX Sub); same shapes make a `sub` node, others `binary_bcast`.
  Tensor sub(Tensor a, Tensor b, const std::string& name = "");
  /// A * B elementwise, numpy broadcasting (ONNX Mul); same shapes make a `mul` node, others `binary_bcast`.
  Tensor mul(Tensor a, Tensor b, const std::string& name = "");
  Tensor sigmoid(Tensor x, const std::string& name = "");
  Tensor tanh(Tensor x, const std::string& name = "");
  Tensor relu(Tensor x, const std::string& name = "");
  /// x > 0 ? x : alpha * x elementwise (alpha: the slope below zero, PyTorch's negative_slope).
  Tensor leaky_relu(Tensor x, float alpha = 0.01f, const std::string& name = "");
  /// x * Phi(x) elementwise, Phi the standard normal CDF: the exact (erf) GELU, PyTorch's default.
  Tensor gelu(Tensor x, const std::string& name = "");
  /// max(0, min(1, alpha * x + beta)) elementwise (ONNX HardSigmoid; PyTorch's nn.Hardsigmoid is alpha = 1/6,
  /// beta = 1/2). The gradient is alpha * dY strictly between the kinks and 0 at them, as PyTorch's. alpha and
  /// beta must be finite.
  Tensor hard_sigmoid(Tensor x, float alpha = 0.2f, float beta = 0.5f, const std::string& name = "");
  /// x * min(max(x + 3, 0), 6) / 6 elementwise (ONNX HardSwish, PyTorch's nn.Hardswish, MobileNetV3's
  /// activation); the kinks at -3 and 3 take the middle piece's slope, as PyTorch's gradient.
  Tensor hard_swish(Tensor x, const std::string& name = "");
  /// Concatenation along `dim`; all other extents must agree.
  Tensor concat(const std::vector<Tensor>& xs, int dim, const std::string& name = "");
  /// Splits `x` along `dim` into pieces of the given extents (they must add up to x's extent).
  std::vector<Tensor> split(Tensor x, int dim, const std::vector<int64_t>& sizes, const std::string& name = "");
  /// x[..., start : start + len, ...] along `dim` (e.g. one gate block of an LSTM's gate matrix).
  Tensor slice(Tensor x, int dim, int64_t start, int64_t len, const std::string& name = "");
  /// scale * sum of x along `dim`; the result drops that dimension ([1] for a 1-D x).
  Tensor sum(Tensor x, int dim, float scale = 1.0f, const std::string& name = "");
  /// One LSTM step after the gate matmul, as one task: `gates` [B, 4H] holds the pre-activations in
  /// column blocks i, f, g, o; `c_prev` [B, H] is the previous cell state. c = sigmoid(f) c_prev +
  /// sigmoid(i) tanh(g), h = sigmoid(o) tanh(c). Returns {h, c} (values "<name>.h", "<name>.c").
  std::pair<Tensor, Tensor> lstm_cell(Tensor gates, Tensor c_prev, const std::string& name = "");
  /// 2-D convolution of NCHW `x` [N,C,H,W] with filters `w` [K,C,R,S] plus a bias `b` [K], the same
  /// `stride` and zero `pad` in both spatial dimensions; the result is [N,K,OH,OW] with
  /// OH = (H + 2 pad - R) / stride + 1 (floor). Cross-correlation, as in every DL framework.
  Tensor conv2d(Tensor x, Tensor w, Tensor b, int stride = 1, int pad = 0, const std::string& name = "");
  /// Max pooling of NCHW `x` over square `kernel` windows (stride, zero padding never wins; floor size).
  Tensor max_pool(Tensor x, int kernel, int stride, int pad = 0, const std::string& name = "");
  /// Average pooling of NCHW `x`; each window divides by its positions inside the image.
  Tensor avg_pool(Tensor x, int kernel, int stride, int pad = 0, const std::string& name = "");
  /// X0 + X1 + ... (same shapes), summed left to right.
  Tensor add_n(const std::vector<Tensor>& xs, const std::string& name = "");
  /// `x` with another shape of the same element count (C order; a copy, e.g. [N,C,H,W] -> [N, C*H*W]).
  Tensor reshape(Tensor x, const Shape& shape, const std::string& name = "");
  /// Embedding lookup: row idx[n] of `table` [V, D] for each of the N elements of `indices` (any shape),
  /// giving [N, D]. Indices are integers stored exactly in the f32 tensor (0 .. V-1); a value that is not
  /// an integer in range makes Engine::run throw an error naming it. The gradient reaches the table only.
  Tensor embedding(Tensor table, Tensor indices, const std::string& name = "");
  /// scale * (sum of every element of x), shape [1]; computed by one task member, never split.
  Tensor reduce_sum(Tensor x, float scale = 1.0f, const std::string& name = "");
  /// Mean over all elements of the binary cross-entropy of sigmoid(logits) against `targets` (same
  /// shape, values in [0, 1]): softplus(z) - t z, averaged. Returns a [1] loss.
  Tensor logistic_xent(Tensor logits, Tensor targets, const std::string& name = "");
  /// The Phased LSTM time gate [B, H] (Neil et al. 2016) for timestamps `time` [B], periods `tau` [H] and
  /// shifts `shift` [H]: open ratio r_on, leak alpha while closed (codelets/phased_gate). Differentiable in
  /// `tau` and `shift` (backward() adds phased_gate_grad, so the periods and shifts learn); not in `time`:
  /// backward() refuses timestamps that depend on parameters.
  Tensor phased_gate(Tensor time, Tensor tau, Tensor shift, float r_on, float alpha, const std::string& name = "");
  /// Mean over the batch of the cross-entropy of softmax(logits) rows against `targets` (same [B, C]
  /// shape, rows summing to one). Returns a [1] loss.
  Tensor softmax_xent(Tensor logits, Tensor targets, const std::string& name = "");
  // issue 19: normalisation (codelets/batch_norm, codelets/layer_norm)
  /// A state leaf (ValueKind::state: neither a parameter nor a gradient) of `shape` filled with `fill`, e.g.
  /// batch_norm's running statistics (mean 0, variance 1 as PyTorch starts them). Saved and restored with
  /// the parameters by --save/--load and checkpoints (Graph::optimizer_state lists it).
  Tensor state(const std::string& name, const Shape& shape, float fill = 0.0f);
  /// ONNX BatchNormalization (opset 15; PyTorch BatchNorm1d/2d) of `x` [N, C, ...] (rank 2 to 4) with
  /// `scale`, `bias`, `running_mean`, `running_var` all [C]: Y = scale (x - mean) / sqrt(var + epsilon) + bias.
  /// Inference (`training` false, ONNX training_mode 0): mean and var are the running statistics (any
  /// tensors but parameters). Training: mean and the biased variance of each channel over N * spatial, and
  /// the node updates, once per run, running = momentum * running + (1 - momentum) * batch (ONNX's momentum:
  /// PyTorch's momentum m is ONNX's 1 - m, so PyTorch's default 0.1 is 0.9 here), with the unbiased batch
  /// variance for running_var as PyTorch; the running statistics must then be Graph::state tensors, each
  /// updated by this node only. The gradient (dX, dscale, dbias) is the full batch-statistics one in
  /// training mode. Also makes "<name>.mean" and "<name>.invstd" [C] (the statistics used; no gradient).
  Tensor batch_norm(Tensor x, Tensor scale, Tensor bias, Tensor running_mean, Tensor running_var, float epsilon,
                    float momentum, bool training, const std::string& name = "");
  /// ONNX LayerNormalization (opset 17; PyTorch LayerNorm): normalises `x` over its dimensions from `axis`
  /// (negative counts from the end) to the last, Y = (x - mean) / sqrt(var + epsilon) * scale + bias, var
  /// biased; `scale` and `bias` have the normalised shape (ONNX's optional bias: pass zeros). Also makes
  /// "<name>.mean" and "<name>.invstd" [rows] (rows = product of the extents before axis; no gradient).
  Tensor layer_norm(Tensor x, Tensor scale, Tensor bias, int axis = -1, float epsilon = 1e-5f,
                    const std::string& name = "");
  /// Folds every inference-mode batch_norm whose input is a conv2d's output read by nothing else into that
  /// convolution's weights and bias (W' = a W, b' = a (b - mean) + bias per filter, a = scale /
  /// sqrt(var + eps)), rewriting them in their host buffers: the same numbers up to rounding, one node and
  /// one pass over the activations fewer. For inference graphs whose weights hold their final values; call
  /// before the graph is bound to an Engine (refused after backward()). Returns the number folded.
  int fold_batch_norm();
  /// Makes every relu, clip, hard_swish or hard_sigmoid whose input is a conv2d's output read by nothing else
  /// part of that convolution: it writes the activation's output and applies the same formula to each output
  /// block right after computing it, while it is in cache. The same bits as before, one node and one pass over the
  /// activations fewer per pair. For inference graphs: refused after backward(), and backward() is refused
  /// after it; call before the graph is bound to an Engine (after fold_batch_norm(), which leaves the
  /// convolution right before the activation). Returns the number fused.
  int fuse_conv_activation();
  /// Keeps every activation tensor (and gradient, in a training graph) in oneDNN's blocked layout (nChw16c on
  /// AVX-512, nChw8c on AVX2) where each op that touches it can take it so: a convolution or convolution gradient
  /// on oneDNN's blocked kernels, or, when all of their operands are kept blocked, max pooling and its gradient,
  /// concat and split along whole channel blocks and the per-element ops (relu, relu_grad, add of equal shapes,
  /// ...). Those ops then read and write it as it is, and reorders to and from NCHW happen only in the
  /// convolutions at the edges. The same bits as before (the layout changes where bytes sit, not the arithmetic).
  /// A blocked tensor cannot be read or written by Engine::read / write: keep() what you read first. Call it
  /// before the graph is bound to an Engine: on an inference graph after fold_batch_norm() and
  /// fuse_conv_activation(), on a training graph after backward() (which is refused after it). Returns the number
  /// of tensors blocked (0 without oneDNN or its AVX2 kernels).
  int block_layouts();
  /// The channel block of `t`'s layout: 0 for the plain layout every tensor has unless block_layouts() changed
  /// it, else B for nChw<B>c.
  int channel_block(Tensor t) const;
  // issue 19: broadcasting arithmetic, unary math, reductions over axes
  /// A / B, numpy broadcasting (ONNX Div on floats; x / 0 gives inf or NaN as IEEE does).
  Tensor div(Tensor a, Tensor b, const std::string& name = "");
  /// A ^ B with a float exponent tensor, numpy broadcasting (ONNX Pow; torch.pow). d/dB is 0 where A = 0
  /// and B >= 0 (PyTorch's convention); a negative base gives NaN for a non-integer exponent.
  Tensor pow(Tensor a, Tensor b, const std::string& name = "");
  /// Elementwise ONNX Sqrt, Erf, Exp, Log, Neg, Abs, Reciprocal (ew_chain-fusable). Outside the domain the
  /// result is IEEE's (sqrt(-1) NaN, log(0) -inf); abs's gradient at 0 is 0 (PyTorch).
  Tensor sqrt(Tensor x, const std::string& name = "");
  Tensor erf(Tensor x, const std::string& name = "");
  Tensor exp(Tensor x, const std::string& name = "");
  Tensor log(Tensor x, const std::string& name = "");
  Tensor neg(Tensor x, const std::string& name = "");
  Tensor abs(Tensor x, const std::string& name = "");
  Tensor reciprocal(Tensor x, const std::string& name = "");
  /// min(max(x, lo), hi) elementwise (ONNX Clip with constant min and max; torch.clamp; ReLU6 is
  /// clip(x, 0, 6)). The gradient passes where lo <= x <= hi. lo and hi must not be NaN.
  Tensor clip(Tensor x, float lo, float hi, const std::string& name = "");
  /// ONNX ReduceSum (opset 13: axes as a list, noop_with_empty_axes = 0): the sum over `axes` (negative
  /// counts from the end; empty = every axis), keeping them as extent 1 when `keepdims`. Reducing every
  /// axis without keepdims gives shape [1] (corun has no rank-0 tensors).
  Tensor reduce_sum_axes(Tensor x, std::vector<int> axes, bool keepdims = true, const std::string& name = "");
  /// ONNX ReduceMean (axes, keepdims as ReduceSum above): the sum over `axes` times 1 / (their element
  /// count). GlobalAveragePool is reduce_mean(x, {2, 3}, true).
  Tensor reduce_mean(Tensor x, std::vector<int> axes, bool keepdims = true, const std::string& name = "");
  // issue 19: recurrent cells
  /// One GRU step after its two projections, as one task (ONNX GRU with linear_before_reset = 1, PyTorch's
  /// nn.GRU): `x_proj` [B, 3H] = x W^T + Wb and `h_proj` [B, 3H] = h_prev R^T + Rb, both in gate blocks
  /// z, r, n (ONNX order); `h_prev` [B, H]. z = sigmoid(x_z + h_z), r = sigmoid(x_r + h_r),
  /// n = tanh(x_n + r h_n), h = (1 - z) n + z h_prev. Returns h (value "<name>.h"). Layers: corun/rnn.hpp.
  Tensor gru_cell(Tensor x_proj, Tensor h_proj, Tensor h_prev, const std::string& name = "");
  // issue 19: convolution and pooling (ONNX Conv, ConvTranspose, MaxPool, AveragePool, GlobalAveragePool)
  /// ONNX Conv (opset 11+: strides, pads, dilations, group; auto_pad resolved into pads by the caller),
  /// PyTorch Conv2d: NCHW `x` [N,C,H,W], filters `w` [K, C/groups, R, S], an optional bias `b` [K] (pass
  /// Tensor() for none). Output [N, K, OH, OW], OH = (H + pad_top + pad_bottom - dilation_h (R-1) - 1) /
  /// stride_h + 1 (floor), likewise OW. Output channel k sees input channels of group k / (K/groups).
  Tensor conv2d(Tensor x, Tensor w, Tensor b, const Conv2dOptions& options, const std::string& name = "");
  /// ONNX ConvTranspose (strides, pads, dilations, group, output_padding; output_shape resolved into pads
  /// by the caller), PyTorch ConvTranspose2d: `x` [N, C_in, H, W], `w` [C_in, C_out/groups, R, S], optional
  /// `b` [C_out]. Output [N, C_out, OH, OW], OH = (H-1) stride_h - pad_top - pad_bottom + dilation_h (R-1) +
  /// output_padding_h + 1: the gradient of conv2d with respect to its input, plus the bias.
  Tensor conv_transpose2d(Tensor x, Tensor w, Tensor b, const Conv2dOptions& options, const std::string& name = "");
  /// ONNX MaxPool (kernel_shape, strides, pads, ceil_mode; no dilations, one output), PyTorch MaxPool2d.
  Tensor max_pool(Tensor x, const Pool2dOptions& options, const std::string& name = "");
  /// ONNX AveragePool (kernel_shape, strides, pads, ceil_mode, count_include_pad), PyTorch AvgPool2d
  /// (whose count_include_pad default is true, ONNX's and Pool2dOptions' false).
  Tensor avg_pool(Tensor x, const Pool2dOptions& options, const std::string& name = "");
  /// ONNX GlobalAveragePool: [N,C,H,W] -> [N,C,1,1], the mean of each plane (an avg_pool of one H x W window).
  Tensor global_avg_pool(Tensor x, const std::string& name = "");
  // issue 19: shape ops (transpose, softmax / log_softmax, batched matmul, dropout, gather)
  /// ONNX Transpose: Y dim d = X dim perm[d] (PyTorch permute). An empty perm reverses the dims (ONNX's
  /// default). The gradient is the transpose by the inverse permutation.
  Tensor transpose(Tensor x, const std::vector<int>& perm, const std::string& name = "");
  /// ONNX Softmax (opset 13; PyTorch softmax(dim=axis)): exp(x - max) / sum(exp(x - max)) along `axis`
  /// (negative counts from the end).
  Tensor softmax(Tensor x, int axis = -1, const std::string& name = "");
  /// ONNX LogSoftmax (opset 13; PyTorch log_softmax(dim=axis)): x - max - log(sum(exp(x - max))).
  Tensor log_softmax(Tensor x, int axis = -1, const std::string& name = "");
  /// ONNX / numpy MatMul (torch.matmul): A [..., M, K] times B [..., K, N] with batch dims broadcast (right
  /// aligned, extent 1 broadcasts), e.g. attention's [B,H,S,D] x [B,H,D,S]. A 1-D A is a row and a 1-D B a
  /// column whose added dim is removed from the result (numpy's rule; vector . vector gives [1]). The
  /// gradient of a broadcast operand sums over its broadcast batch dims in a fixed order. The 2-D
  /// `matmul` is unchanged.
  Tensor batch_matmul(Tensor a, Tensor b, const std::string& name = "");
  /// ONNX Dropout (PyTorch nn.Dropout): in training each element is zeroed with probability `ratio` and
  /// the rest scaled by 1 / (1 - ratio); at inference (training false) or ratio 0 it returns `x` itself
  /// and adds no node. The mask is a pure hash of (seed, step[0], element index) (codelets/dropout): the
  /// same at every team width, recomputed by the backward. `step` is a [1] input holding the iteration
  /// number (an exact integer), which the caller writes before each Engine::run so every iteration draws a
  /// fresh mask and a resumed run draws the masks of the uninterrupted one. Without it every dropout of the
  /// graph reads the one input named kDropoutStep ("dropout.step", made by the first, holding 0: a fixed
  /// mask per node until written), so a training loop writes its iteration number there when the graph
  /// has that input (Graph::find). Give each node its own seed.
  Tensor dropout(Tensor x, float ratio, int64_t seed, bool training = true, Tensor step = Tensor(),
                 const std::string& name = "");
  /// The name of the [1] input every dropout node built without a step tensor reads.
  static constexpr const char* kDropoutStep = "dropout.step";
  /// ONNX Gather (numpy take, torch.index_select): X indexed along `axis` by `indices` (integers stored
  /// exactly in f32, as embedding's; negative ones count from the end); the result is X's shape with that
  /// dim replaced by the indices' dims. `scalar_index`: `indices` is [1] and stands for ONNX's 0-D index,
  /// so the dim is dropped (picking one time step). The gradient (a scatter-add) reaches X only; the 2-D
  /// table lookup with axis 0 is `embedding`.
  Tensor gather(Tensor x, Tensor indices, int axis = 0, bool scalar_index = false, const std::string& name = "");
  ///@}

  /// Appends gradient nodes for every value `loss` depends on through parameters, then (by default) one
  /// SGD update per parameter. `loss` must have shape [1]. Call once per graph. Gradients of a value used
  /// several times are summed in a fixed order (the reverse of the order the uses were added).
  void backward(Tensor loss, const BackwardOptions& options = {});
  /// The gradient of `t` after backward(), or an invalid Tensor if `t` has none.
  Tensor grad(Tensor t) const;
  /// Changes the step of every SGD update node (takes effect at the next Engine::run).
  void set_learning_rate(float learning_rate);
  /// The hyper-parameter tensor [4] the adam and sgd_wd nodes read (codelets/optimizer_hyper.hpp), or an
  /// invalid Tensor when backward() made only sgd / sgd_momentum nodes. Write optimizer_hyper_at(step,
  /// learning_rate) into it before every run (Engine::write once bound; Graph::data before).
  Tensor optimizer_hyper() const;
  /// Its contents for `step` (1-based) at `learning_rate`: the rate, Adam's lr / (1 - beta1^step) and
  /// sqrt(1 - beta2^step) (computed in double, as PyTorch), and the step.
  std::vector<float> optimizer_hyper_at(int64_t step, float learning_rate) const;

  /// Marks `t` as a value the user will read, so fuse_elementwise() never removes it. The loss given to
  /// backward() and every value grad() returns are kept automatically.
  void keep(Tensor t);
  /// Fuses chains of same-shape elementwise ops (add without broadcast, sub, mul, sigmoid, tanh, relu and
  /// the gradients of the last three) into single ew_chain nodes, computing bitwise the same numbers.
  /// An intermediate is removed only if it is an activation or gradient with one writer and one reader
  /// that is not kept; reading it afterwards throws. Call after backward() (which then refuses to run) and
  /// before the graph is bound to an Engine. Returns the number of nodes removed.
  int fuse_elementwise();

  /// Replaces groups of at least `min_size` independent sibling ops of one kind (reading outputs of one
  /// node, feeding one node, or both: e.g. the 26 embedding lookups of wide&deep) by one `group` node each,
  /// whose team members share out the group's ops: one task instead of many, bitwise the same numbers.
  /// Only thread-safe small kinds are grouped (graphs/passes/group_parallel_ops.hpp has the rules). Call
  /// after backward() and before the graph is bound to an Engine. Returns the number of nodes removed.
  int group_parallel_ops(int min_size = 2);

  /// @name Introspection
  ///@{
  int num_values() const;
  int num_nodes() const;
  Tensor value(int id) const;
  ValueKind kind(Tensor t) const;
  std::vector<Tensor> inputs() const;
  std::vector<Tensor> params() const;
  /// Optimizer state values (ValueKind::state, e.g. momentum velocities), in creation order.
  std::vector<Tensor> optimizer_state() const;
  /// Value by name (inputs, params and named nodes' outputs); throws corun::Error if absent.
  Tensor find(const std::string& name) const;
  /// Whether find(`name`) finds a value.
  bool has(const std::string& name) const;
  /// Makes find(`name`) return `t` as well: a second name for one value (as a multi-output op's first output
  /// has its node's name and its own; an imported model's output under the file's name when its node named it
  /// otherwise). Throws corun::Error when `name` is empty or already names a value.
  void add_name(Tensor t, const std::string& name);
  /// Graphviz DOT text of the nodes and values.
  std::string dump_dot() const;
  ///@}

  /// Host buffer of `t` (numel floats). Throws corun::Error while the graph is bound to an Engine.
  float* data(Tensor t);
  const float* data(Tensor t) const;

  /// Internal representation, for the engine and passes (not a stable API).
  detail::GraphImpl& impl() { return *impl_; }
  const detail::GraphImpl& impl() const { return *impl_; }

 private:
  std::unique_ptr<detail::GraphImpl> impl_;
};

/// Caps the bytes of tensor buffers that the process's Graphs may hold at once at what they hold now plus
/// `bytes`: a value whose buffer would go past it is refused, before it is allocated, with corun::Error
/// (invalid_config) naming the value, its shape, the total, `source` (what the limit is) and `hint` (what to
/// lower). Every buffer is allocated and zero-filled when its value is created, so without a cap a model too
/// large for the machine grows the process until the kernel kills it. The corun commands set it from
/// the memory budget before they build a model whose size its flags do not bound (an ONNX file). Default: no
/// cap; `bytes` = infinity removes it.
void set_tensor_memory_limit(double bytes, const std::string& source, const std::string& hint);

}  // namespace corun
