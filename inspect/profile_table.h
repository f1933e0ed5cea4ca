// The profile of training steps as a table: what tinygpt train --profile and
// bench_train_step --profile print (the record itself: tensor/runtime/profile.h).
//
//   op                  pass  calls/step   ms/step   share    work/step          speed
//   gemm attn.qkv       fwd            4     0.412    1.4%  0.302 GFLOP  146.5 GFLOP/s
//   ...
//   layer norm          bwd            9     0.180    0.6%      7.10 MB     39.4 GB/s
//   ...
//   other                                    1.200    4.0%
//   total                                   30.000  100.0%  1.234 GFLOP   41.1 GFLOP/s
//
// GEMM rows come first, by role in model order, each forward then backward;
// then one row per family and pass that ran. Work is FLOPs (2 per multiply-add)
// for the GEMM and attention rows, bytes read + written for the memory-bound
// ones (each tensor once: the least traffic the op can have), bytes allocated
// for allocation. Then the GEMM bound: the step's FLOPs at the speed of
// cblas_sgemm on this machine, measured on the step's largest GEMM shape.
#pragma once
#include <ostream>

#include "tinygpt/tensor/runtime/profile.h"

namespace tg::inspect {

struct SgemmSpeed {
  GemmShape shape;
  double gflops = 0;
  int repeats = 0;
};

// cblas_sgemm (cpu::gemm) of out (m, n) = (m, k) @ (k, n), no transposes: the
// best of at least `min_repeats` calls after an untimed one, and of as many
// as fit in 0.2 s (a small product is noisy on a shared machine). Zero GFLOP/s
// for an empty shape.
SgemmSpeed measure_sgemm(const GemmShape& shape, int min_repeats = 5);

void print_profile_table(std::ostream& out, const ProfileRecord& record, const SgemmSpeed& sgemm);

}  // namespace tg::inspect
