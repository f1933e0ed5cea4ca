// Reduced-precision weights for inference: a trained model's weight matrices
// kept in bfloat16 (2 bytes a weight) or in int8 blocks of 32 with a float32
// scale each (1.125 bytes), tensor/quantized_matrix.h. Batch-1 generation reads
// every weight once per token, so fewer bytes are directly more tokens a second.
//
// Quantized: every Linear's weight (the LM head's included) and the embedding
// tables (Embedding, LearnedPositions). Kept in float32: biases and LayerNorm
// parameters (a few thousand numbers). A quantized module runs inference only:
// no gradient reaches its weights, and training refuses it.
//
// Parameter names stay those of the float32 model, so a quantized checkpoint
// (training/checkpoint.h) holds "blocks.0.attn.qkv.weight" as bfloat16 or int8,
// and for int8 its scales as "blocks.0.attn.qkv.weight_scale" (out, ceil(in / 32)).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/nn/module.h"
#include "tinygpt/tensor/quantized_matrix.h"

namespace tg::nn {

// "bf16" or "bfloat16" -> BFloat16, "int8" -> Int8, "f32" or "float32" -> Float32
// (no quantization); anything else throws naming the choices.
DType parse_weight_format(const std::string& name);
// "float32", "bfloat16", "int8".
const char* weight_format_name(DType format);

// Quantizes every weight matrix of `module` (and its children) listed above to
// `format` (bfloat16 or int8). The weights must be float32. With
// QuantizedValues::Zeros the matrices are zeros for a loader to fill, and the
// float32 values are not read (a model built to be loaded never touches them).
void quantize_weights(Module& module, DType format, QuantizedValues values = QuantizedValues::FromWeights);

// The quantized matrices of `module`, under their weights' parameter names.
std::vector<std::pair<std::string, QuantizedMatrix>> quantized_weights(const Module& module);

// named_parameters() with each quantized weight widened back to float32 and the
// scales left out: the numbers the quantized model computes with, as ordinary
// tensors (the walk-through, inspect/, takes its parameters this way).
std::vector<std::pair<std::string, Tensor>> dequantized_parameters(const Module& module);

}  // namespace tg::nn
