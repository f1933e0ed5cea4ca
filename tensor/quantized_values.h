// Where a quantized matrix's values come from (tensor/quantized_matrix.h): the
// float32 weights, or zeros that a loader overwrites next (the float32 values
// are then not read at all). Its own header so that nn/module.h can name it
// without including the quantized matrices.
#pragma once

namespace tg {

enum class QuantizedValues { FromWeights, Zeros };

}  // namespace tg
