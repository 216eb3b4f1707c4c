// The scalar formulas of binary_bcast and its gradient, in float (fast) and double (ref). Only the
// broadcast kernels use them (div and pow are not chainable ops; add, sub and mul are the same single
// float operations as ew::add_fast etc.).
#pragma once

#include "codelets/broadcast/broadcast.hpp"

#include <cmath>

namespace corun::codelets::bcast {

template <class T>
inline T apply(BinaryOp op, T a, T b) {
  switch (op) {
    case BinaryOp::add:
      return a + b;
    case BinaryOp::sub:
      return a - b;
    case BinaryOp::mul:
      return a * b;
    case BinaryOp::div:
      return a / b;
    case BinaryOp::pow:
      return std::pow(a, b);
  }
  return T(0);
}

/// dC/dA * dc (operand 0) or dC/dB * dc (operand 1). As in PyTorch's pow backward, the base gradient is 0
/// where the exponent is 0 (0 * pow(0, -1) would be NaN) and the exponent gradient is 0 where the base is 0
/// and the exponent >= 0 (log(0) would give NaN where the limit is 0).
template <class T>
inline T partial(BinaryOp op, int operand, T a, T b, T dc) {
  switch (op) {
    case BinaryOp::add:
      return dc;
    case BinaryOp::sub:
      return operand == 0 ? dc : -dc;
    case BinaryOp::mul:
      return operand == 0 ? dc * b : dc * a;
    case BinaryOp::div:
      return operand == 0 ? dc / b : -dc * a / (b * b);
    case BinaryOp::pow:
      if (operand == 0) return b == T(0) ? T(0) : dc * b * std::pow(a, b - T(1));
      return a == T(0) && b >= T(0) ? T(0) : dc * std::pow(a, b) * std::log(a);
  }
  return T(0);
}

}  // namespace corun::codelets::bcast
