// serve/kernels/cells.hpp — the elementwise half of an LSTM/GRU step on a block of rows and hidden units, and
// the small GEMM every member runs (OpenBLAS on the caller's thread count). Shared by the planned executor
// and the baselines so both compute the same cell.
#pragma once

#include <cstdint>

namespace corun::serve {

/// C[M, N] += A[M, K] W[N, K]^T (row-major, leading dimensions given). M == 1 uses a GEMV.
void gemm_acc_nt(int m, int n, int k, const float* a, int lda, const float* w, int ldw, float* c, int ldc);

/// LSTM on `rows` x `hn` units. Row r's pre-activations of gate g start at gates + r*ldg + slot[g]*hn
/// (gate order i, f, g, o; they are overwritten by the activations). c: [rows, hn] state (read unless
/// `first`, then written); h: row r at h + r*ldh. tmp: hn floats.
void lstm_cell_block(int rows, int hn, float* gates, int ldg, const int* slot, float* c, bool first, float* h,
                     int ldh, float* tmp);

/// GRU (r, z, n; n = tanh(x_n + r * (W_hn h + b_hn))): xg holds x-side pre-activations (with b_ih), hg the
/// h-side ones (with b_hh), both at the same slot offsets. h_prev (nullptr at the first step): row r at
/// h_prev + r*ldh; h out likewise (h may not alias h_prev).
void gru_cell_block(int rows, int hn, float* xg, int ldx, float* hg, int ldhg, const int* slot, const float* h_prev,
                    float* h, int ldh);

}  // namespace corun::serve
