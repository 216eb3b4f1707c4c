// conv_kernels — single-threaded convolution kernels on the CIFAR-quick and PathNet shapes: corun's
// im2col + OpenBLAS kernels (codelets/conv2d, one team member doing the whole batch) against oneDNN 2.6
// (Debian libdnnl-dev) with the same NCHW/OIHW buffers, for the forward pass, backward-data and
// backward-filter (+ bias). oneDNN gets the whole batch in one primitive (its best case) and, for the
// forward pass, also one primitive call per image (what a width-independent split by images needs).
// Primitives are created once per shape, outside the timed loop. Run with OMP_NUM_THREADS=1
// (bench/conv_kernels.sh does): oneDNN's OpenMP runtime would otherwise use every core.
// Issue 18: the codelets' own oneDNN kernels (codelets/conv2d/conv2d_dnnl.cpp: format `any`, blocked layouts,
// reorders from and to the plain buffers inside the call, fixed image chunks and filter tiles) get a column of
// their own, with the implementation oneDNN picked for them and what CORUN_CONV_KERNEL=auto chooses.
//
//   conv_kernels [reps]      prints one markdown table row per shape and pass: median ms over reps
#include "codelets/conv2d/conv2d.hpp"
#include "codelets/conv2d/conv2d_dnnl.hpp"
#include "codelets/conv2d/conv_impls.hpp"
#include "codelets/op.hpp"

#include <dnnl.hpp>

#include <cblas.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using corun::Shape;
using namespace corun::codelets;
using tag = dnnl::memory::format_tag;
using dt = dnnl::memory::data_type;

struct ConvShape {
  const char* name;
  int64_t n, c, h, w, k, r, stride, pad;
  int64_t groups = 1;
};

double median_ms(int reps, const std::function<void()>& f) {
  f();  // warm-up: first-touch, OpenBLAS buffers, oneDNN JIT
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<float> random_vec(int64_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 20;
  openblas_set_num_threads(1);
  const ConvShape shapes[] = {
      {"cifar-quick conv1", 64, 1, 28, 28, 32, 5, 1, 2},  {"cifar-quick conv2", 64, 32, 13, 13, 32, 5, 1, 2},
      {"cifar-quick conv3", 64, 32, 6, 6, 64, 5, 1, 2},   {"pathnet small l0", 64, 3, 32, 32, 16, 3, 1, 1},
      {"pathnet small l1", 64, 16, 16, 16, 16, 3, 1, 1},  {"pathnet small l2", 64, 16, 8, 8, 16, 3, 1, 1},
      // MobileNetV2 at 64 px, batch 16 (bench/onnx_models.sh's training step): its depthwise 3x3 layers and two
      // of its 1x1 ones.
      {"mobilenet_v2 dw1", 16, 32, 32, 32, 32, 3, 1, 1, 32},
      {"mobilenet_v2 dw2", 16, 96, 32, 32, 96, 3, 2, 1, 96},
      {"mobilenet_v2 dw3", 16, 144, 16, 16, 144, 3, 1, 1, 144},
      {"mobilenet_v2 dw6", 16, 192, 8, 8, 192, 3, 1, 1, 192},
      {"mobilenet_v2 dw8", 16, 384, 4, 4, 384, 3, 1, 1, 384},
      {"mobilenet_v2 dw14", 16, 576, 4, 4, 576, 3, 2, 1, 576},
      {"mobilenet_v2 dw16", 16, 960, 2, 2, 960, 3, 1, 1, 960},
      {"mobilenet_v2 1x1 expand", 16, 24, 16, 16, 144, 1, 1, 0},
      {"mobilenet_v2 1x1 project", 16, 144, 16, 16, 24, 1, 1, 0},
      {"mobilenet_v2 1x1 8x8 expand", 16, 64, 8, 8, 384, 1, 1, 0},
      {"mobilenet_v2 1x1 8x8 project", 16, 384, 8, 8, 64, 1, 1, 0},
      {"mobilenet_v2 1x1 last", 16, 320, 2, 2, 1280, 1, 1, 0},
      // ResNet-50's bottleneck 1x1 layers at 64 px, batch 16: wide channels on small maps (the codelets' oneDNN
      // kernels run them on the plain layouts, onednn-plain in conv_impls.hpp).
      {"resnet50 1x1 layer1 reduce", 16, 256, 16, 16, 64, 1, 1, 0},
      {"resnet50 1x1 layer3 expand", 16, 256, 4, 4, 1024, 1, 1, 0},
      {"resnet50 1x1 layer4 reduce", 16, 2048, 2, 2, 512, 1, 1, 0},
  };
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream strm(eng);
  std::mt19937 rng(7);
  std::printf("| shape (N,C,H,W -> K, RxS/stride/pad[/groups]) | pass | corun im2col+OpenBLAS ms (depthwise: "
              "direct loops) | oneDNN batch ms | "
              "oneDNN per-image ms | oneDNN impl | corun oneDNN ms (blocked; 1x1: plain) | auto picks |\n"
              "|---|---|---:|---:|---:|---|---:|---|\n");
  for (const ConvShape& q : shapes) {
    const int64_t oh = window_out_extent(q.h, q.r, q.stride, q.pad), ow = window_out_extent(q.w, q.r, q.stride, q.pad);
    const int64_t cg = q.c / q.groups;
    std::vector<float> x = random_vec(q.n * q.c * q.h * q.w, rng), wt = random_vec(q.k * cg * q.r * q.r, rng),
                       b = random_vec(q.k, rng), y(static_cast<size_t>(q.n * q.k * oh * ow)),
                       dy = random_vec(q.n * q.k * oh * ow, rng), dx(x.size()), dw(wt.size()), db(b.size());
    const Shape sx{q.n, q.c, q.h, q.w}, sw{q.k, cg, q.r, q.r}, sb{q.k}, sy{q.n, q.k, oh, ow};
    auto call = [&](OpKind kind, std::vector<Shape> bufs) {
      OpCall c;
      c.kind = kind;
      c.shapes = std::move(bufs);
      c.modes.assign(c.shapes.size(), Access::read);
      c.i = ConvParams{q.stride, q.stride, q.pad, q.pad, q.pad, q.pad, 1, 1, q.groups}.attrs();
      return c;
    };
    // The corun im2col column: the list's choice without oneDNN (im2col, or the direct loops for depthwise).
    OpCall fwd = call(OpKind::conv2d, {sx, sw, sb, sy});
    OpCall bwd_data = call(OpKind::conv2d_grad_data, {sy, sw, sx});
    OpCall bwd_filter = call(OpKind::conv2d_grad_filter, {sx, sy, sw, sb});
    for (OpCall* c : {&fwd, &bwd_data, &bwd_filter}) choose_conv_impl(*c, ConvKernel::im2col);
    float* fb[] = {x.data(), wt.data(), b.data(), y.data()};
    float* db_[] = {dy.data(), wt.data(), dx.data()};
    float* fb2[] = {x.data(), dy.data(), dw.data(), db.data()};
    const double c_fwd = median_ms(reps, [&] { conv2d_fast(fwd, fb, 0, 1); });
    const double c_bd = median_ms(reps, [&] { conv2d_grad_data_fast(bwd_data, db_, 0, 1); });
    const double c_bf = median_ms(reps, [&] { conv2d_grad_filter_fast(bwd_filter, fb2, 0, 1); });
    // The codelets' oneDNN kernels, one member doing the whole batch (reorders included).
    const ConvGeometry geo = ConvGeometry::of(fwd, sx, sw, sy);
    const bool blocked = dnnl_conv_supported(geo);
    // oneDNN's direct kernels, blocked or (1x1 on large maps) plain, whatever the rule for `auto` says.
    for (OpCall* c : {&fwd, &bwd_data, &bwd_filter}) {
      const ConvImpl impl = choose_conv(geo, c->kind, ConvKernel::dnnl).impl;
      c->impl = static_cast<uint8_t>(impl == ConvImpl::onednn_plain ? impl : ConvImpl::onednn);
    }
    const double k_fwd = blocked ? median_ms(reps, [&] { conv2d_dnnl(fwd, fb, 0, 1); }) : -1.0;
    const double k_bd = blocked ? median_ms(reps, [&] { conv2d_grad_data_dnnl(bwd_data, db_, 0, 1); }) : -1.0;
    const double k_bf = blocked ? median_ms(reps, [&] { conv2d_grad_filter_dnnl(bwd_filter, fb2, 0, 1); }) : -1.0;
    const char* pick[3];
    for (int pass = 0; pass < 3; ++pass)
      pick[pass] = conv_impl_name(choose_conv(geo, std::array{OpKind::conv2d, OpKind::conv2d_grad_data,
                                                              OpKind::conv2d_grad_filter}[static_cast<size_t>(pass)],
                                              ConvKernel::auto_)
                                      .impl);

    // oneDNN on the graph's own layouts (NCHW activations, OIHW filters): no reorders.
    const dnnl::memory::dims strides{q.stride, q.stride}, pad{q.pad, q.pad};
    auto md = [](dnnl::memory::dims d, tag t) { return dnnl::memory::desc(d, dt::f32, t); };
    auto make = [&](int64_t n) {
      const dnnl::memory::desc wd = q.groups == 1 ? md({q.k, q.c, q.r, q.r}, tag::oihw)
                                                  : md({q.groups, q.k / q.groups, cg, q.r, q.r}, tag::goihw);
      return std::vector<dnnl::memory::desc>{md({n, q.c, q.h, q.w}, tag::nchw), wd, md({q.k}, tag::x),
                                             md({n, q.k, oh, ow}, tag::nchw)};
    };
    const auto m = make(q.n), m1 = make(1);
    dnnl::convolution_forward::primitive_desc fpd(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, m[0],
                                        m[1], m[2], m[3], strides, pad, pad),
        eng);
    dnnl::convolution_forward::primitive_desc fpd1(
        dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct, m1[0],
                                        m1[1], m1[2], m1[3], strides, pad, pad),
        eng);
    dnnl::convolution_backward_data::primitive_desc bdpd(
        dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, m[0], m[1], m[3], strides, pad, pad),
        eng, fpd);
    dnnl::convolution_backward_weights::primitive_desc bwpd(
        dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, m[0], m[1], m[2], m[3], strides,
                                                 pad, pad),
        eng, fpd);
    dnnl::convolution_forward pf(fpd), pf1(fpd1);
    dnnl::convolution_backward_data pbd(bdpd);
    dnnl::convolution_backward_weights pbw(bwpd);
    auto mem = [&](const dnnl::memory::desc& d, std::vector<float>& v) { return dnnl::memory(d, eng, v.data()); };
    dnnl::memory mx = mem(m[0], x), mw = mem(m[1], wt), mb = mem(m[2], b), my = mem(m[3], y), mdy = mem(m[3], dy),
                 mdx = mem(m[0], dx), mdw = mem(m[1], dw), mdb = mem(m[2], db);
    const double d_fwd = median_ms(reps, [&] {
      pf.execute(strm, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, my}});
      strm.wait();
    });
    dnnl::memory mx1(m1[0], eng, nullptr), my1(m1[3], eng, nullptr);
    const double d_fwd1 = median_ms(reps, [&] {
      for (int64_t n = 0; n < q.n; ++n) {
        mx1.set_data_handle(x.data() + n * q.c * q.h * q.w);
        my1.set_data_handle(y.data() + n * q.k * oh * ow);
        pf1.execute(strm, {{DNNL_ARG_SRC, mx1}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_BIAS, mb}, {DNNL_ARG_DST, my1}});
      }
      strm.wait();
    });
    const double d_bd = median_ms(reps, [&] {
      pbd.execute(strm, {{DNNL_ARG_DIFF_DST, mdy}, {DNNL_ARG_WEIGHTS, mw}, {DNNL_ARG_DIFF_SRC, mdx}});
      strm.wait();
    });
    const double d_bf = median_ms(reps, [&] {
      pbw.execute(strm,
                  {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DIFF_DST, mdy}, {DNNL_ARG_DIFF_WEIGHTS, mdw}, {DNNL_ARG_DIFF_BIAS, mdb}});
      strm.wait();
    });
    const std::string groups = q.groups == 1 ? "" : "/g" + std::to_string(q.groups);
    char geom[128];
    std::snprintf(geom, sizeof(geom), "%s (%ld,%ld,%ld,%ld -> %ld, %ldx%ld/%ld/%ld%s)", q.name, long(q.n), long(q.c),
                  long(q.h), long(q.w), long(q.k), long(q.r), long(q.r), long(q.stride), long(q.pad), groups.c_str());
    std::printf("| %s | forward | %.3f | %.3f | %.3f | %s | %.3f | %s |\n", geom, c_fwd, d_fwd, d_fwd1,
                fpd.impl_info_str(), k_fwd, pick[0]);
    std::printf("| %s | backward-data | %.3f | %.3f | - | %s | %.3f | %s |\n", geom, c_bd, d_bd, bdpd.impl_info_str(),
                k_bd, pick[1]);
    std::printf("| %s | backward-filter + bias | %.3f | %.3f | - | %s | %.3f | %s |\n", geom, c_bf, d_bf,
                bwpd.impl_info_str(), k_bf, pick[2]);
  }
  return 0;
}
