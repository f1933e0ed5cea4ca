// tinygpt in one include, for a program that uses it as a library:
//
//   #include <tinygpt/tinygpt.h>
//
// The layers in the order they build on each other (docs/ARCHITECTURE.md); each
// header also stands alone, as <tinygpt/LAYER/FILE.h>.
#pragma once

#include "tinygpt/tensor/factory.h"    // tensors: zeros, arange, from_vector, ...
#include "tinygpt/tensor/tensor.h"
#include "tinygpt/tensor/view.h"       // views: transpose, narrow, reshape, ...
#include "tinygpt/autograd/backward.h"  // reverse mode: backward(loss)
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/ops.h"      // the differentiable ops
#include "tinygpt/nn/module.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/models/generate.h"   // sampling with a KV cache
#include "tinygpt/models/chat_session.h"  // a conversation that keeps its KV cache across turns
#include "tinygpt/models/gpt.h"
#include "tinygpt/models/hf_directory.h"  // Hugging Face model directories: GPT-2, Llama, Mistral, Qwen
#include "tinygpt/training/load_model.h"  // a path to a model and its tokenizer, in one call
#include "tinygpt/training/train.h"      // the training loop
#include "tinygpt/datasets/training_data.h"
#include "tinygpt/tokenizer/chat_template.h"  // chat templates, rendered as Hugging Face does
#include "tinygpt/tokenizer/text_tokenizer.h"
