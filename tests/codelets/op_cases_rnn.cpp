// Op-harness cases of the recurrent cells (issue 19): gru_cell and gru_cell_grad on [B, H] hidden states.
// B = 1 and 3 leave members without rows; H = 17 and 33 leave a scalar tail after the 16-wide blocks; the
// large scale saturates the gates (exp overflow safety).
#include "op_cases.hpp"

namespace corun::codelets::testing {

std::vector<OpCaseSpec> rnn_op_cases() {
  constexpr Access R = Access::read;
  constexpr Access W = Access::write;
  std::vector<OpCaseSpec> out;
  const int64_t sizes[][2] = {{1, 1}, {3, 5}, {5, 1}, {17, 33}, {64, 128}, {2, 100}, {7, 16}};
  auto make = [&](const std::string& name, OpKind kind, std::vector<Shape> shapes, std::vector<Access> modes,
                  float scale) {
    OpCaseSpec c;
    c.name = name;
    c.call.kind = kind;
    c.call.shapes = std::move(shapes);
    c.call.modes = std::move(modes);
    c.scale = scale;
    out.push_back(std::move(c));
  };
  for (const auto& bh : sizes) {
    const Shape p{bh[0], 3 * bh[1]}, h{bh[0], bh[1]};
    const std::string dims = std::to_string(bh[0]) + "x" + std::to_string(bh[1]);
    make("gru_cell_" + dims, OpKind::gru_cell, {p, p, h, h, p}, {R, R, R, W, W}, 1.0f);
    make("gru_cell_large_" + dims, OpKind::gru_cell, {p, p, h, h, p}, {R, R, R, W, W}, 30.0f);
    make("gru_cell_grad_" + dims, OpKind::gru_cell_grad, {p, p, h, h, p, p, h}, {R, R, R, R, W, W, W}, 1.0f);
  }
  return out;
}

}  // namespace corun::codelets::testing
