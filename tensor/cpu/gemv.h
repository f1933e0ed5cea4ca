// One row of activations times a weight matrix stored (out, in), as in a
// Linear layer or the tied LM head: the whole of batch-1 generation's matmuls.
//
//   out (N) = alpha * w (N, K) @ x (K) + beta * out
//
// Each weight is read once per token and used for one multiply-add, so the
// product is bound by memory bandwidth, not arithmetic: the kernel's job is to
// stream w at the machine's read bandwidth. It hands the N output rows to
// the OpenMP threads in chunks and reads each row as one sequential stream.
#pragma once
#include <cstdint>

namespace tg::cpu {

// w is row-major with rows w_row_stride >= K floats apart; x and out are
// contiguous. beta == 0 overwrites out, ignoring what it held (even NaN), as BLAS does.
void gemv_rows(int64_t n, int64_t k, float alpha, const float* w, int64_t w_row_stride, const float* x, float beta,
               float* out);

// The same product on the calling thread alone, with the same kernel (so the same
// numbers): for a thread that computes its own share of the rows inside a
// parallel region (tensor/runtime/team.h).
void gemv_rows_serial(int64_t n, int64_t k, float alpha, const float* w, int64_t w_row_stride, const float* x,
                      float beta, float* out);

// The product of one w with `count` rows of activations at once, on the calling
// thread: outs[s] (N) = w (N, K) @ xs[s] (K), each exactly as gemv_rows_serial(n,
// k, 1, w, w_row_stride, xs[s], 0, outs[s]) computes it (the same sums in the
// same order), each row of w read from memory once for all of them and shared
// from registers by three at a time: batched decoding (models/gpt_decode.cpp).
void gemv_rows_serial_batch(int64_t n, int64_t k, const float* w, int64_t w_row_stride, const float* const* xs,
                            float* const* outs, int64_t count);

// The same product as a plain loop, one row after another: the reference the
// tests and bench/bench_matmul.cpp compare gemv_rows with.
void gemv_rows_reference(int64_t n, int64_t k, float alpha, const float* w, int64_t w_row_stride, const float* x,
                         float beta, float* out);

}  // namespace tg::cpu
