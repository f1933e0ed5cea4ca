// Which channels of a head RoPE turns together (tensor/cpu/rope_kernels.h).
#pragma once

namespace tg::nn {

enum class RopePairing {
  Interleaved,  // (x_2i, x_2i+1), as the RoFormer paper: tinygpt's GPT-2 models with --positional rope
  Half,         // (x_i, x_i+HS/2), "rotate half": GPT-NeoX, Llama, Qwen, and every Hugging Face checkpoint
};

}  // namespace tg::nn
