// Compiled twice (tensor/CMakeLists.txt): for AVX2, where TG_ISA is isa_avx2,
// and for AVX-512, where it is isa_avx512; each fills its namespace's table.
#include "tinygpt/tensor/cpu/quantized_kernels.h"

namespace tg::TG_ISA {

const QuantizedRowKernels kQuantizedRowKernels = {&dot_int8_rows, &dot_bfloat16_rows, &dequantize_int8_row,
                                                  &dequantize_int8_row_to_bfloat16, &dequantize_bfloat16_row};

}  // namespace tg::TG_ISA
