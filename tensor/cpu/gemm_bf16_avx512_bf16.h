// The AVX512-BF16 kernel of cpu::gemm_bf16 (tensor/cpu/gemm_bf16.h), same
// arguments, already checked. Compiled with -mavx512bf16 in its own namespace
// (tensor/runtime/isa.h): call it only where cpu_has_avx512_bf16().
#pragma once
#include <cstdint>

#include "tinygpt/tensor/bfloat16.h"

namespace tg::cpu::isa_avx512_bf16 {

void gemm_bf16(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const bfloat16* a,
               int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace tg::cpu::isa_avx512_bf16
