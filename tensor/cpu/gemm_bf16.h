// The mixed-precision matrix product: bfloat16 operands, float32 accumulation
// and result, for training in bfloat16 (issue 16). The conventions are
// cpu::gemm's (tensor/cpu/gemm.h), row-major:
//
//   c (m, n) = alpha * op(a) (m, k) @ op(b) (k, n) + beta * c
//
// op(a) is a, element (i, p) at a[i * lda + p], or with transpose_a its
// transpose, element (i, p) at a[p * lda + i]; b likewise with ldb. Rows of c
// are ldc apart. beta == 0 overwrites c, ignoring what it held (even NaN), and
// alpha == 0 or k == 0 reads neither a nor b, as BLAS does.
//
// Two kernels compute it, chosen once per process:
//   avx512_bf16    our own (tensor/cpu/gemm_bf16_avx512_bf16.cpp): packed panels and
//                  the AVX512-BF16 instruction VDPBF16PS, 32 multiply-adds of
//                  bfloat16 pairs into 16 float32 sums per instruction. Where
//                  the CPU has AVX512-BF16 and active_isa() is AVX-512.
//   float32_sgemm  everywhere else: the operands widened to float32 (exactly),
//                  the longer side of c a panel at a time, and cblas_sgemm.
//                  OpenBLAS has sbgemm, but Debian's build does not export it.
// Both give the float32 product of the bfloat16 values, up to the order of the
// float32 sums, with one difference: VDPBF16PS treats subnormal inputs and
// products as zero (its products of normal bfloat16 values lose nothing else).
#pragma once
#include <cstdint>

#include "tinygpt/tensor/bfloat16.h"

namespace tg::cpu {

enum class Bf16GemmKernel { avx512_bf16, float32_sgemm };

// The kernel gemm_bf16 uses on this CPU: avx512_bf16 where cpu_has_avx512_bf16()
// and active_isa() is AVX-512 (so TINYGPT_ISA=avx2 selects float32_sgemm).
Bf16GemmKernel bf16_gemm_kernel();
const char* bf16_gemm_kernel_name(Bf16GemmKernel kernel);  // "AVX512-BF16", "float32 sgemm"

// Throws tg::Error for a negative size or a leading dimension shorter than the
// rows it strides over.
void gemm_bf16(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const bfloat16* a,
               int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc);

// The same with the kernel named, for tests and benchmarks that compare the
// two on one CPU; asking for avx512_bf16 on a CPU without it throws tg::Error.
void gemm_bf16(Bf16GemmKernel kernel, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const bfloat16* a, int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace tg::cpu
