// Which set of quantized row kernels (tensor/cpu/quantized_kernels.h) runs on
// this CPU: a copy's from the kernel table, or the AVX-512 copy's with the two
// dot products of quantized_kernels_avx512_bf16.cpp.
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/cpu/quantized_kernels_avx512_bf16.h"

namespace tg::cpu {

namespace {

// The AVX-512 copy with the two dot products of tensor/cpu/quantized_kernels_avx512_bf16.cpp.
const QuantizedRowKernels& vnni_bf16_row_kernels() {
  static const QuantizedRowKernels kernels = [] {
    QuantizedRowKernels avx512 = kernel_tables(Isa::avx512).quantized_rows;
    avx512.dot_int8_rows = &isa_avx512_bf16::dot_int8_rows;
    avx512.dot_bfloat16_rows = &isa_avx512_bf16::dot_bfloat16_rows;
    return avx512;
  }();
  return kernels;
}

bool cpu_has_vnni_and_bf16() { return cpu_has_avx512_vnni() && cpu_has_avx512_bf16(); }

}  // namespace

QuantizedKernelSet active_quantized_kernel_set() {
  static const QuantizedKernelSet set = active_isa() == Isa::avx2 ? QuantizedKernelSet::avx2
                                        : cpu_has_vnni_and_bf16() ? QuantizedKernelSet::avx512_vnni_bf16
                                                                  : QuantizedKernelSet::avx512;
  return set;
}

std::vector<QuantizedKernelSet> quantized_kernel_sets_here() {
  std::vector<QuantizedKernelSet> sets = {QuantizedKernelSet::avx2};
  if (cpu_has_avx512()) sets.push_back(QuantizedKernelSet::avx512);
  if (cpu_has_vnni_and_bf16()) sets.push_back(QuantizedKernelSet::avx512_vnni_bf16);
  return sets;
}

const char* quantized_kernel_set_name(QuantizedKernelSet set) {
  switch (set) {
    case QuantizedKernelSet::avx2: return "AVX2";
    case QuantizedKernelSet::avx512: return "AVX-512";
    case QuantizedKernelSet::avx512_vnni_bf16: return "AVX-512 VNNI+BF16";
  }
  return "?";
}

const QuantizedRowKernels& quantized_row_kernels(QuantizedKernelSet set) {
  switch (set) {
    case QuantizedKernelSet::avx2: return kernel_tables(Isa::avx2).quantized_rows;
    case QuantizedKernelSet::avx512: return kernel_tables(Isa::avx512).quantized_rows;
    case QuantizedKernelSet::avx512_vnni_bf16: return vnni_bf16_row_kernels();
  }
  return kernel_tables(Isa::avx2).quantized_rows;
}

}  // namespace tg::cpu
