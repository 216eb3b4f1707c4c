// Blocked channel layouts of conv2d's activations: conv_layout.hpp has the scheme.
#include "codelets/conv2d/conv_layout.hpp"

#include <vector>

namespace corun::codelets {

namespace {

float* grown(std::vector<float>& buffer, int64_t floats) {
  if (static_cast<int64_t>(buffer.size()) < floats) buffer.resize(static_cast<size_t>(floats));
  return buffer.data();
}

}  // namespace

void conv2d_via_plain(Kernel kernel, const OpCall& call, float* const* buf, int rank, int width) {
  const ConvLayouts layouts = ConvLayouts::of(call);
  // conv2d: X in, Y out (the last buffer). conv2d_grad_data: dY (the output side) in, dX out.
  const bool data = call.kind == OpKind::conv2d_grad_data;
  const int out = call.nbuffers() - 1;
  const int64_t in_block = data ? layouts.y_block : layouts.x_block, out_block = data ? layouts.x_block : layouts.y_block;
  const Shape& xs = call.shapes[0];
  const Shape& ys = call.shapes[static_cast<size_t>(out)];
  const Range images = split_range(xs[0], rank, width);
  if (images.size() <= 0) return;
  const int64_t x_image = xs[1] * xs[2] * xs[3], y_image = ys[1] * ys[2] * ys[3];
  thread_local std::vector<float> x_plain, y_plain;

  OpCall part = call;
  ConvLayouts::set(part.i, 0, 0);
  part.shapes[0].dims[0] = images.size();
  part.shapes[static_cast<size_t>(out)].dims[0] = images.size();
  std::vector<float*> parts(buf, buf + call.nbuffers());
  const float* x = buf[0] + images.begin * x_image;
  float* y = buf[out] + images.begin * y_image;
  parts[0] = const_cast<float*>(x);
  if (in_block != 0) {
    parts[0] = grown(x_plain, images.size() * x_image);
    to_plain(x, parts[0], images.size(), xs[1], xs[2] * xs[3], in_block);
  }
  parts[static_cast<size_t>(out)] = out_block != 0 ? grown(y_plain, images.size() * y_image) : y;
  kernel(part, parts.data(), 0, 1);
  if (out_block != 0) to_blocked(parts[static_cast<size_t>(out)], y, images.size(), ys[1], ys[2] * ys[3], out_block);
}

void conv2d_grad_filter_via_plain(Kernel kernel, const OpCall& call, float* const* buf, int rank, int width) {
  const ConvLayouts layouts = ConvLayouts::of(call);
  thread_local std::vector<float> x_plain, dy_plain;
  OpCall plain = call;
  ConvLayouts::set(plain.i, 0, 0);
  std::vector<float*> parts(buf, buf + call.nbuffers());
  const auto unblock = [&](int b, int64_t block, std::vector<float>& copy) {
    if (block == 0) return;
    const Shape& s = call.shapes[static_cast<size_t>(b)];
    parts[static_cast<size_t>(b)] = grown(copy, s.numel());
    to_plain(buf[b], parts[static_cast<size_t>(b)], s[0], s[1], s[2] * s[3], block);
  };
  unblock(0, layouts.x_block, x_plain);
  unblock(1, layouts.y_block, dy_plain);
  kernel(plain, parts.data(), rank, width);
}

}  // namespace corun::codelets
