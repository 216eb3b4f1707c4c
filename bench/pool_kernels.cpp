// pool_kernels: the max pool fast kernels (max_pool, max_pool_grad) on the models' pool shapes, one thread,
// plain NCHW and oneDNN's nChw16c (the layout PathNet's pools run in when its convolutions are oneDNN's). The
// measurement behind the NaN check of issue 52 item 1 (codelets/pool/pool.hpp, max_pool_takes):
// bench/pool_kernels.sh runs two builds of this program in turn and compares them.
//
//   pool_kernels [--rounds R] [--nan]
//
// Prints one line per case and op: `case<TAB>op<TAB>ms`, ms the median over R rounds (default 15) of one call's
// time, each round a batch of calls lasting >= 5 ms. X is uniform in [-1, 1); with --nan each plane of X holds
// one NaN, so every plane takes the NaN-aware path (informative: a build without it gives other values).
// Only the kernel table (codelets/op.hpp) is used, so the program builds against older trees too.
#include "codelets/blocked_layout.hpp"
#include "codelets/op.hpp"
#include "codelets/pool/pool.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace corun;
using namespace corun::codelets;

struct PoolCase {
  const char* what;
  int64_t n, c, h, w, kernel, stride, pad;
  int64_t block;  // 0: plain NCHW, else nChw<block>c
};

// PathNet small (batch 64, 16 filters, 2x2 / 2 pools on 32x32, 16x16, 8x8; six modules per layer), in both
// layouts; CIFAR-quick's first pool (3x3 / 2 on 28x28, 32 channels) and GoogLeNet-like 3x3 / 1 pad 1 and
// 3x3 / 2 pad 1 pools on short rows (the plain kernel's plane mode).
const PoolCase kCases[] = {
    {"pathnet-l0 64x16x32x32 2/2 nChw16c", 64, 16, 32, 32, 2, 2, 0, 16},
    {"pathnet-l1 64x16x16x16 2/2 nChw16c", 64, 16, 16, 16, 2, 2, 0, 16},
    {"pathnet-l2 64x16x8x8 2/2 nChw16c", 64, 16, 8, 8, 2, 2, 0, 16},
    {"pathnet-l0 64x16x32x32 2/2 plain", 64, 16, 32, 32, 2, 2, 0, 0},
    {"pathnet-l1 64x16x16x16 2/2 plain", 64, 16, 16, 16, 2, 2, 0, 0},
    {"pathnet-l2 64x16x8x8 2/2 plain", 64, 16, 8, 8, 2, 2, 0, 0},
    {"cifar-pool1 64x32x28x28 3/2 plain", 64, 32, 28, 28, 3, 2, 0, 0},
    {"inception 32x64x8x8 3/1p1 plain", 32, 64, 8, 8, 3, 1, 1, 0},
    {"stem 32x64x16x16 3/2p1 plain", 32, 64, 16, 16, 3, 2, 1, 0},
};

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The median over `rounds` of one call's seconds, each round >= 5 ms of calls.
double median_call(Kernel k, const OpCall& call, float* const* buf, int rounds) {
  int batch = 1;
  for (double t = 0.0; t < 5e-3; batch *= 2) {
    const double t0 = seconds_now();
    for (int i = 0; i < batch; ++i) k(call, buf, 0, 1);
    t = seconds_now() - t0;
    if (t >= 5e-3) break;
  }
  std::vector<double> per_call;
  for (int r = 0; r < rounds; ++r) {
    const double t0 = seconds_now();
    for (int i = 0; i < batch; ++i) k(call, buf, 0, 1);
    per_call.push_back((seconds_now() - t0) / batch);
  }
  std::nth_element(per_call.begin(), per_call.begin() + rounds / 2, per_call.end());
  return per_call[static_cast<size_t>(rounds / 2)];
}

void run_case(const PoolCase& q, int rounds, bool nan) {
  const int64_t oh = (q.h + 2 * q.pad - q.kernel) / q.stride + 1, ow = (q.w + 2 * q.pad - q.kernel) / q.stride + 1;
  const Shape xs{q.n, q.c, q.h, q.w}, ys{q.n, q.c, oh, ow};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(xs.numel())), dy(static_cast<size_t>(ys.numel()));
  for (float& v : x) v = u(rng);
  for (float& v : dy) v = u(rng);
  if (nan)
    for (int64_t p = 0; p < q.n * q.c; ++p) x[static_cast<size_t>(p * q.h * q.w + q.h / 2 * q.w + q.w / 2)] = NAN;
  if (q.block > 0) {  // the same values, laid out blocked: the kernels see what a blocked graph gives them
    std::vector<float> plain = x;
    to_blocked(plain.data(), x.data(), q.n, q.c, q.h * q.w, q.block);
    plain = dy;
    to_blocked(plain.data(), dy.data(), q.n, q.c, oh * ow, q.block);
  }
  std::vector<float> y(dy.size()), dx(x.size());
  OpCall fwd;
  fwd.kind = OpKind::max_pool;
  fwd.shapes = {xs, ys};
  fwd.modes = {Access::read, Access::write};
  fwd.i = {q.kernel, q.stride, q.pad, 0};
  fwd.i[kPoolBlockAttr] = q.block;
  OpCall bwd = fwd;
  bwd.kind = OpKind::max_pool_grad;
  bwd.shapes = {xs, ys, xs};
  bwd.modes = {Access::read, Access::read, Access::write};
  float* fb[] = {x.data(), y.data()};
  float* bb[] = {x.data(), dy.data(), dx.data()};
  std::printf("%s\tmax_pool\t%.4f\n", q.what, 1e3 * median_call(op_info(OpKind::max_pool).fast, fwd, fb, rounds));
  std::printf("%s\tmax_pool_grad\t%.4f\n", q.what,
              1e3 * median_call(op_info(OpKind::max_pool_grad).fast, bwd, bb, rounds));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  bool nan = false;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--rounds" && a + 1 < argc) {
      rounds = std::atoi(argv[++a]);
    } else if (arg == "--nan") {
      nan = true;
    } else {
      std::fprintf(stderr, "usage: %s [--rounds R] [--nan]\n", argv[0]);
      return 2;
    }
  }
  if (rounds < 1) {
    std::fprintf(stderr, "error: --rounds needs a positive count\n");
    return 2;
  }
  for (const PoolCase& q : kCases) run_case(q, rounds, nan);
  return 0;
}
