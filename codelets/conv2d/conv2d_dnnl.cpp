// oneDNN convolution kernels in oneDNN's own blocked layouts: conv2d_dnnl.hpp has the scheme, conv_kernel_choice.cpp
// which kernels run which shape.
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv2d_dnnl_cut.hpp"
#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/conv2d/conv_layout.hpp"
#include "codelets/onednn_runtime.hpp"
#include "codelets/stable_buffers.hpp"

#include <algorithm>

#ifdef CORUN_HAVE_DNNL
#include <dnnl.hpp>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#endif

namespace corun::codelets {

#ifndef CORUN_HAVE_DNNL

int64_t dnnl_channel_block() { return 0; }
std::string dnnl_description() { return "im2col + OpenBLAS (built without oneDNN)"; }
void conv2d_dnnl(const OpCall&, float* const*, int, int) {}
void conv2d_grad_data_dnnl(const OpCall&, float* const*, int, int) {}
void conv2d_grad_filter_dnnl(const OpCall&, float* const*, int, int) {}

#else

namespace {

using namespace dnnl_cut;
using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// The calling thread's stream; the first call on a thread also bounds oneDNN's OpenMP team to 1 thread.
dnnl::stream& thread_stream() {
  thread_local std::unique_ptr<dnnl::stream> stream;
  if (!stream) {
    onednn_one_thread();
    stream = std::make_unique<dnnl::stream>(cpu_engine());
  }
  return *stream;
}

memory::desc plain(const memory::dims& d, tag t) { return memory::desc(d, dt::f32, t); }

// The layouts a primitive works in: oneDNN's choice (format `any`: blocked, its direct kernels) or the graph's
// own NCHW / OIHW (oneDNN's gemm:jit, no reorders); the implementation list says which (ConvImpl::onednn_plain).
struct Layouts {
  bool plain = false;
  memory::desc act(const memory::dims& d) const { return memory::desc(d, dt::f32, plain ? tag::nchw : tag::any); }
  memory::desc wei(const memory::dims& d) const {
    return memory::desc(d, dt::f32, !plain ? tag::any : d.size() == 4 ? tag::oihw : tag::goihw);
  }
};

// The filters of `g` as oneDNN sees them: [K, C, R, S] for one group, [G, K/G, C/G, R, S] for several (the
// same bytes as corun's [K, C/G, R, S]).
memory::dims weights_dims(const ConvGeometry& g) {
  if (g.groups == 1) return {g.k, g.c, g.r, g.s};
  return {g.groups, g.kg(), g.cg(), g.r, g.s};
}
memory::desc plain_weights(const ConvGeometry& g) {
  return plain(weights_dims(g), g.groups == 1 ? tag::oihw : tag::goihw);
}

// A channel tile of whole blocks of an activation whose primitive chose the activation's own layout: `count`
// images, each one contiguous run of `floats` at `offset + i * stride` of the graph's buffer. Port copies it
// as runs, where oneDNN's reorder of the strided view ran its generic `simple:any` at 11 ns per float (on
// Inception-v3's blocked dY tiles in backward-weights, 35 ms of a 450 ms training step).
struct Runs {
  int64_t count = 0, floats = 0, stride = 0, offset = 0;
};

// A buffer the primitive reads or writes: `user` wraps the graph's plain buffer (its pointer set per call),
// `inner` is the layout the primitive chose, a buffer of its own when it differs (then `move` reorders
// user -> inner for an input, inner -> user for an output, or `runs` copies it).
struct Port {
  memory user, inner;
  std::optional<dnnl::reorder> move;
  Runs runs;
  bool input = true;

  Port() = default;
  Port(const memory::desc& user_desc, const memory::desc& chosen, bool is_input, Runs as_runs = {})
      : input(is_input) {
    user = memory(user_desc, cpu_engine(), DNNL_MEMORY_NONE);
    if (user_desc == chosen) {
      inner = user;
      return;
    }
    inner = memory(chosen, cpu_engine());
    if (as_runs.count > 0) runs = as_runs;
    else move = is_input ? dnnl::reorder(user, inner) : dnnl::reorder(inner, user);
  }
  void bind(const float* data) { user.set_data_handle(const_cast<float*>(data)); }
  void in(dnnl::stream& s) {
    if (move) move->execute(s, user, inner);
    if (runs.count > 0) copy_runs(true);
  }
  void out(dnnl::stream& s) {
    if (move) move->execute(s, inner, user);
    if (runs.count > 0) copy_runs(false);
  }

 private:
  void copy_runs(bool to_inner) {
    float* const data = static_cast<float*>(user.get_data_handle());  // the graph's buffer, as bound
    float* const mine = static_cast<float*>(inner.get_data_handle());
    for (int64_t i = 0; i < runs.count; ++i) {
      float* graph = data + runs.offset + i * runs.stride;
      float* own = mine + i * runs.floats;
      std::copy_n(to_inner ? graph : own, runs.floats, to_inner ? own : graph);
    }
  }
};

enum class Pass : int64_t { forward, backward_data, backward_weights };

// The cache key: pass, every extent and window attribute, the slice (mb images of a channel tile at k0 / c0
// of kt / ct channels, or a backward-weights tile at k0 of kt channels), the bias and the implementation
// (Winograd, plain or blocked layouts: two calls of one shape may run different ones).
using Key = std::array<int64_t, 15 + kMaxIntAttrs>;

Key key_of(Pass pass, const OpCall& call, const ConvGeometry& g, int64_t slice_a, int64_t slice_b, int64_t slice_c,
           bool bias) {
  Key key{static_cast<int64_t>(pass), g.n, g.c, g.h, g.w, g.k, g.r, g.s, g.oh, g.ow, slice_a, slice_b, slice_c,
          bias ? 1 : 0, static_cast<int64_t>(conv_impl_of(call))};
  std::copy(call.i.begin(), call.i.end(), key.begin() + 15);
  return key;
}

// One cached primitive with its ports and scratchpad.
struct Entry {
  dnnl::primitive prim;
  Port a, b, c, d;  // per pass: see the three kernels below
  memory scratch;
  bool has_bias = false;
  std::unordered_map<int, memory> args;  // the primitive's arguments, made once with the entry
  std::shared_ptr<void> shared_weights;  // the weights' reorder shared through stable_buffers.hpp, if any

  // Points port b at the weights `w` and gives the primitive their reorder: made once and shared by every
  // thread when the weights change only through the engine (an inference graph's, stable_buffers.hpp), which
  // saves reordering unchanged weights at every call (60% of a ResNet-18 inference at batch 1); else into
  // this entry's own buffer, as every call did before.
  void bind_weights(const float* w, const Key& key, dnnl::stream& s) {
    b.bind(w);
    if (b.move) {
      const std::string id(reinterpret_cast<const char*>(key.data()), sizeof(Key));
      shared_weights = stable_buffer_derived(w, id, [&] {
        auto m = std::make_shared<memory>(b.inner.get_desc(), cpu_engine());
        b.move->execute(s, b.user, *m);
        s.wait();
        return std::static_pointer_cast<void>(m);
      });
      if (shared_weights) {
        args.at(DNNL_ARG_WEIGHTS) = *std::static_pointer_cast<memory>(shared_weights);
        return;
      }
    }
    args.at(DNNL_ARG_WEIGHTS) = b.inner;
    b.in(s);
  }
};

struct Window {
  memory::dims strides, dilates, pad_l, pad_r;
};

Window window_of(const OpCall& call, const ConvGeometry& g) {
  const ConvParams p = ConvParams::of(call);
  return {{g.sh, g.sw}, {g.dh - 1, g.dw - 1}, {p.pad_top, p.pad_left}, {p.pad_bottom, p.pad_right}};
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

// The calling thread's entry for `key`, made by `make` on first use.
template <typename Make>
Entry& cached(const Key& key, Make make) {
  thread_local std::map<Key, std::unique_ptr<Entry>> cache;
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make()).first;
  return *it->second;
}

// The format tag of an activation in channel blocks of `block` (0: plain NCHW; conv_layout.hpp).
tag activation_tag(int64_t block) {
  return block == 16 ? tag::nChw16c : block == 8 ? tag::nChw8c : tag::nchw;
}

// An activation of `mb` images and `channels` channels in NCHW or nChw<block>c, or its tile of `tile_channels`
// from `first` (a strided view: the buffer's pointer stays the chunk's first image; whole blocks in nChw<block>c).
memory::desc activation_view(int64_t mb, int64_t channels, int64_t h, int64_t w, int64_t first, int64_t tile_channels,
                             int64_t block = 0) {
  const memory::desc whole = plain({mb, channels, h, w}, activation_tag(block));
  if (tile_channels == channels) return whole;
  return whole.submemory_desc({mb, tile_channels, h, w}, {0, first, 0, 0});
}

// The port of such an activation (or tile) for a primitive that chose `chosen`: a tile in its own layout is
// copied as runs (Runs: image i's channels [first, first + tile_channels) are one run in NCHW and, whole
// blocks, in nChw<block>c).
Port activation_port(int64_t mb, int64_t channels, int64_t h, int64_t w, int64_t first, int64_t tile_channels,
                     int64_t block, const memory::desc& chosen, bool is_input) {
  const memory::desc view = activation_view(mb, channels, h, w, first, tile_channels, block);
  const int64_t unit = std::max<int64_t>(block, 1);
  Runs runs;
  if (tile_channels != channels && first % unit == 0 && tile_channels % unit == 0 &&
      chosen == plain({mb, tile_channels, h, w}, activation_tag(block)))
    runs = Runs{mb, tile_channels * h * w, channels * h * w, first * h * w};
  return Port(view, chosen, is_input, runs);
}

// The filters a tile reads, as a view of the plain weights: output-channel rows k0.. (forward, and every
// grouped tile) or input-channel columns c0.. of every row (backward-data without groups).
memory::desc weights_view(const ConvGeometry& g, const ChannelTile& t) {
  const memory::desc whole = plain_weights(g);
  if (t.kt == g.k && t.ct == g.c) return whole;
  if (g.groups > 1) return whole.submemory_desc(weights_dims(tile_geometry(g, t)), {t.k0 / g.kg(), 0, 0, 0, 0});
  return whole.submemory_desc({t.kt, t.ct, g.r, g.s}, {t.k0, t.c0, 0, 0});
}

// oneDNN's algorithm for an implementation of the list: Winograd for onednn-winograd, direct otherwise.
dnnl::algorithm algorithm_of(ConvImpl impl) {
  return impl == ConvImpl::onednn_winograd ? dnnl::algorithm::convolution_winograd
                                           : dnnl::algorithm::convolution_direct;
}

dnnl::convolution_forward::primitive_desc forward_pd(const ConvGeometry& g, const Window& win, int64_t mb,
                                                     bool bias, Layouts l,
                                                     dnnl::algorithm alg = dnnl::algorithm::convolution_direct) {
  const memory::dims src{mb, g.c, g.h, g.w}, wei = weights_dims(g), dst{mb, g.k, g.oh, g.ow};
  const auto desc = bias ? dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, l.act(src),
                                                           l.wei(wei), plain({g.k}, tag::x), l.act(dst), win.strides,
                                                           win.dilates, win.pad_l, win.pad_r)
                         : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, alg, l.act(src),
                                                           l.wei(wei), l.act(dst), win.strides, win.dilates, win.pad_l,
                                                           win.pad_r);
  return dnnl::convolution_forward::primitive_desc(desc, user_scratchpad(), cpu_engine());
}

// Forward of one tile over `mb` images: ports a = X (the tile's input channels), b = W (its rows), c = Y (its
// output channels), d = B (its entries).
std::unique_ptr<Entry> make_forward(const ConvGeometry& g, const Window& win, int64_t mb, const ChannelTile& t,
                                    bool bias, ConvLayouts layouts, ConvImpl impl) {
  const ConvGeometry tile = tile_geometry(g, t);
  const auto pd = forward_pd(tile, win, mb, bias, Layouts{impl == ConvImpl::onednn_plain}, algorithm_of(impl));
  auto e = std::make_unique<Entry>();
  e->prim = dnnl::convolution_forward(pd);
  // X and Y as the graph holds them: a blocked one (Graph::block_layouts) in the layout the primitive chose
  // needs no reorder.
  e->a = activation_port(mb, g.c, g.h, g.w, t.c0, t.ct, layouts.x_block, pd.src_desc(), true);
  e->b = Port(weights_view(g, t), pd.weights_desc(), true);
  e->c = activation_port(mb, g.k, g.oh, g.ow, t.k0, t.kt, layouts.y_block, pd.dst_desc(), false);
  if (bias) e->d = Port(plain({t.kt}, tag::x), pd.bias_desc(), true);
  e->has_bias = bias;
  e->scratch = memory(pd.scratchpad_desc(), cpu_engine());
  e->args = {{DNNL_ARG_SRC, e->a.inner}, {DNNL_ARG_WEIGHTS, e->b.inner}, {DNNL_ARG_DST, e->c.inner},
             {DNNL_ARG_SCRATCHPAD, e->scratch}};
  if (bias) e->args.emplace(DNNL_ARG_BIAS, e->d.inner);
  return e;
}

// Backward-data of one tile over `mb` images: ports a = dY (the tile's output channels), b = W (the tile's
// part), c = dX (its input channels).
std::unique_ptr<Entry> make_backward_data(const ConvGeometry& g, const Window& win, int64_t mb, const ChannelTile& t,
                                          ConvLayouts layouts, ConvImpl impl) {
  const ConvGeometry tile = tile_geometry(g, t);
  const memory::dims src{mb, t.ct, g.h, g.w}, wei = weights_dims(tile), dst{mb, t.kt, g.oh, g.ow};
  const Layouts l{impl == ConvImpl::onednn_plain};
  const dnnl::algorithm alg = algorithm_of(impl);
  const auto hint = forward_pd(tile, win, mb, false, l, alg);
  const dnnl::convolution_backward_data::desc desc(alg, l.act(src), l.wei(wei), l.act(dst), win.strides, win.dilates,
                                                   win.pad_l, win.pad_r);
  const dnnl::convolution_backward_data::primitive_desc pd(desc, user_scratchpad(), cpu_engine(), hint);
  auto e = std::make_unique<Entry>();
  e->prim = dnnl::convolution_backward_data(pd);
  // dY and dX as the graph holds them (Graph::block_layouts): blocked ones in the chosen layout need no reorder.
  e->a = activation_port(mb, g.k, g.oh, g.ow, t.k0, t.kt, layouts.y_block, pd.diff_dst_desc(), true);
  e->b = Port(weights_view(g, t), pd.weights_desc(), true);
  e->c = activation_port(mb, g.c, g.h, g.w, t.c0, t.ct, layouts.x_block, pd.diff_src_desc(), false);
  e->scratch = memory(pd.scratchpad_desc(), cpu_engine());
  e->args = {{DNNL_ARG_DIFF_DST, e->a.inner}, {DNNL_ARG_WEIGHTS, e->b.inner}, {DNNL_ARG_DIFF_SRC, e->c.inner},
             {DNNL_ARG_SCRATCHPAD, e->scratch}};
  return e;
}

// Backward-weights of one tile over the whole batch: ports a = X (the tile's input channels, a strided view
// of X when the tile has fewer than all), b = dY (the tile's channels, a strided view of dY), c = dW (the
// tile's rows), d = dB. X and dY in the graph's layouts (Graph::block_layouts): a blocked dY's view is whole
// channel blocks, a copy of contiguous runs rather than a transposing reorder.
std::unique_ptr<Entry> make_backward_weights(const ConvGeometry& g, const Window& win, const FilterTile& ft,
                                             bool bias, ConvLayouts layouts, ConvImpl impl) {
  ConvGeometry tile = g;
  tile.k = ft.kt;
  tile.c = ft.ct;
  tile.groups = ft.gt;
  const memory::dims src{g.n, ft.ct, g.h, g.w}, wei = weights_dims(tile), dst{g.n, ft.kt, g.oh, g.ow};
  // (Plain layouts would make the tile's dY a dense copy of its strided view, a port's reorder.)
  const Layouts l{impl == ConvImpl::onednn_plain};
  const dnnl::algorithm alg = algorithm_of(impl);
  const auto hint = forward_pd(tile, win, g.n, bias, l, alg);
  const auto desc = bias ? dnnl::convolution_backward_weights::desc(alg, l.act(src), l.wei(wei), plain({ft.kt}, tag::x),
                                                                    l.act(dst), win.strides, win.dilates, win.pad_l,
                                                                    win.pad_r)
                         : dnnl::convolution_backward_weights::desc(alg, l.act(src), l.wei(wei), l.act(dst),
                                                                    win.strides, win.dilates, win.pad_l, win.pad_r);
  const dnnl::convolution_backward_weights::primitive_desc pd(desc, user_scratchpad(), cpu_engine(), hint);
  auto e = std::make_unique<Entry>();
  e->prim = dnnl::convolution_backward_weights(pd);
  e->a = activation_port(g.n, g.c, g.h, g.w, ft.c0, ft.ct, layouts.x_block, pd.src_desc(), true);
  e->b = activation_port(g.n, g.k, g.oh, g.ow, ft.k0, ft.kt, layouts.y_block, pd.diff_dst_desc(), true);
  e->c = Port(plain_weights(tile), pd.diff_weights_desc(), false);
  if (bias) e->d = Port(plain({ft.kt}, tag::x), pd.diff_bias_desc(), false);
  e->has_bias = bias;
  e->scratch = memory(pd.scratchpad_desc(), cpu_engine());
  e->args = {{DNNL_ARG_SRC, e->a.inner}, {DNNL_ARG_DIFF_DST, e->b.inner}, {DNNL_ARG_DIFF_WEIGHTS, e->c.inner},
             {DNNL_ARG_SCRATCHPAD, e->scratch}};
  if (bias) e->args.emplace(DNNL_ARG_DIFF_BIAS, e->d.inner);
  return e;
}

}  // namespace

int64_t dnnl_channel_block() {
  // Asked of oneDNN rather than of the CPU flags, so that ONEDNN_MAX_CPU_ISA and oneDNN's own ISA rules hold:
  // the activation layout it picks for a 3x3 convolution of 64 channels, the blocked kernels' shape.
  static const int64_t block = [] {
    ConvGeometry g{1, 64, 8, 8, 64, 3, 3, 8, 8, 1, 1, 1, 1, 1, 1, 1};
    if (!dnnl_conv_supported(g)) return int64_t{0};
    const Window win{{1, 1}, {0, 0}, {1, 1}, {1, 1}};
    const memory::desc dst = forward_pd(g, win, 1, false, Layouts{false}).dst_desc();
    for (int64_t b : {16, 8})
      if (dst == plain({1, 64, 8, 8}, activation_tag(b))) return b;
    return int64_t{0};
  }();
  return block;
}

std::string dnnl_description() {
  const std::string version = onednn_version();
  const int64_t block = dnnl_channel_block();
  if (block == 0) return version + ", no blocked kernels on this CPU (needs AVX2): im2col + OpenBLAS";
  return version + ", activations nChw" + std::to_string(block) + "c";
}

void conv2d_dnnl(const OpCall& call, float* const* buf, int rank, int width) {
  const bool has_bias = call.nbuffers() == 4;
  const ConvGeometry g = ConvGeometry::of(call, call.shapes[0], call.shapes[1], call.shapes[has_bias ? 3 : 2]);
  const TileCut cut = tile_cut(g, image_chunks(g.n), true);
  const Range items = split_range(image_chunks(g.n) * cut.tiles, rank, width);
  if (items.size() <= 0) return;
  const Window win = window_of(call, g);
  dnnl::stream& s = thread_stream();
  const float* x = buf[0];
  float* y = buf[has_bias ? 3 : 2];
  const ConvEpilogue act = ConvEpilogue::of(call);
  const ConvLayouts layouts = ConvLayouts::of(call);  // part of the cache key (call.i)
  Entry* weights_ready = nullptr;  // the entry whose (blocked) filters hold this call's W already
  for (int64_t i = items.begin; i < items.end; ++i) {
    const Item it = item_of(g, cut, i, true);
    const Key key = key_of(Pass::forward, call, g, it.mb, it.tile.k0, it.tile.kt, has_bias);
    Entry& e = cached(key, [&] { return make_forward(g, win, it.mb, it.tile, has_bias, layouts, conv_impl_of(call)); });
    if (weights_ready != &e) {
      e.bind_weights(buf[1], key, s);
      if (has_bias) {
        e.d.bind(buf[2] + it.tile.k0);
        e.d.in(s);
      }
      weights_ready = &e;
    }
    e.a.bind(x + it.n0 * g.c * g.h * g.w);
    e.a.in(s);
    e.c.bind(y + it.n0 * g.k * g.p());
    e.prim.execute(s, e.args);
    e.c.out(s);
    if (act.any()) {
      // Our own loop on the item's output while it is in cache, rather than a oneDNN post-op: the relu and clip
      // ops' exact formulas (oneDNN's clip maps NaN to lo, the op passes it through). An item's channels are one
      // contiguous run per image in NCHW and nChw<B>c alike (whole blocks).
      s.wait();
      act.apply(y, g.k, g.p(), it.n0, it.mb, it.tile.k0, it.tile.kt);
    }
  }
  s.wait();
}

void conv2d_grad_data_dnnl(const OpCall& call, float* const* buf, int rank, int width) {
  const ConvGeometry g = ConvGeometry::of(call, call.shapes[2], call.shapes[1], call.shapes[0]);
  const TileCut cut = tile_cut(g, image_chunks(g.n), false);
  const Range items = split_range(image_chunks(g.n) * cut.tiles, rank, width);
  if (items.size() <= 0) return;
  const Window win = window_of(call, g);
  dnnl::stream& s = thread_stream();
  const ConvLayouts layouts = ConvLayouts::of(call);  // part of the cache key (call.i)
  Entry* weights_ready = nullptr;
  for (int64_t i = items.begin; i < items.end; ++i) {
    const Item it = item_of(g, cut, i, false);
    const Key key = key_of(Pass::backward_data, call, g, it.mb, it.tile.c0, it.tile.ct, false);
    Entry& e = cached(key, [&] { return make_backward_data(g, win, it.mb, it.tile, layouts, conv_impl_of(call)); });
    if (weights_ready != &e) {
      e.bind_weights(buf[1], key, s);
      weights_ready = &e;
    }
    e.a.bind(buf[0] + it.n0 * g.k * g.p());
    e.a.in(s);
    e.c.bind(buf[2] + it.n0 * g.c * g.h * g.w);
    e.prim.execute(s, e.args);
    e.c.out(s);
  }
  s.wait();
}

void conv2d_grad_filter_dnnl(const OpCall& call, float* const* buf, int rank, int width) {
  const ConvGeometry g = ConvGeometry::of(call, call.shapes[0], call.shapes[2], call.shapes[1]);
  const bool has_bias = call.nbuffers() == 4;
  const Range tiles = split_range(filter_tiles(g), rank, width);
  if (tiles.size() <= 0) return;
  const Window win = window_of(call, g);
  dnnl::stream& s = thread_stream();
  const ConvLayouts layouts = ConvLayouts::of(call);  // part of the cache key (call.i)
  // X in the layout of the previous tile's primitive, already reordered. With one group every tile reads the
  // whole X: reordered once per call unless a tile's primitive wants another layout. With several, each tile
  // reads its own input channels.
  const memory* x_ready = nullptr;
  for (int64_t t = tiles.begin; t < tiles.end; ++t) {
    const FilterTile ft = filter_tile(g, t);
    Entry& e = cached(key_of(Pass::backward_weights, call, g, ft.k0, ft.kt, 0, has_bias),
                      [&] { return make_backward_weights(g, win, ft, has_bias, layouts, conv_impl_of(call)); });
    if (g.groups > 1 || !x_ready || x_ready->get_desc() != e.a.inner.get_desc()) {
      e.a.bind(buf[0]);
      e.a.in(s);
      x_ready = &e.a.inner;
    }
    e.b.bind(buf[1]);
    e.b.in(s);
    e.c.bind(buf[2] + ft.k0 * g.crs());
    e.args.at(DNNL_ARG_SRC) = *x_ready;  // a handle copy: no allocation
    if (has_bias) e.d.bind(buf[3] + ft.k0);
    e.prim.execute(s, e.args);
    e.c.out(s);
    if (has_bias) e.d.out(s);
  }
  s.wait();
}

#endif  // CORUN_HAVE_DNNL

}  // namespace corun::codelets
