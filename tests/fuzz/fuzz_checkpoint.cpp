// Fuzzes reading a checkpoint (training/checkpoint.h) as the CLI does.
//
// load_checkpoint maps the file and validates its metadata; then, as `tinygpt
// sample` (cli/model_source.cpp) and `train --resume` (training/train.cpp) go
// on, the model its config describes is built, the weights are copied into it,
// the tokenizer is rebuilt from its JSON and, when the file has them, AdamW's
// moments are restored; a quantized model (bfloat16 or int8 weights) runs one
// token through its kernels. A bad file must be refused with tg::Error at one of
// these steps; anything else (a tokenizer error after load_checkpoint has
// validated the tokenizer, std::bad_alloc, a sanitizer report) is a finding.
// A config can only describe as many parameters as the file's tensors hold,
// so nothing here may allocate much more than the input's size: libFuzzer's
// -malloc_limit_mb reports a file that makes the loader allocate gigabytes.
#include <cstdint>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/training/optimizer_setup.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/factory.h"
#include "tests/fuzz/memory_file.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tg::fuzz::MemoryFile file(data, size);
  try {
    const tg::Checkpoint checkpoint = tg::load_checkpoint(file.path());
    tg::GPT model(checkpoint.header.config, 0, tg::DType::Float32, /*initialize=*/false);
    tg::restore_parameters(checkpoint, model);
    tg::tokenizer::TextTokenizer::from_json(checkpoint.header.tokenizer);
    if (model.weight_format() != tg::DType::Float32) {  // a quantized model's kernels on the file's values
      const tg::NoGradGuard no_grad;
      model.forward(tg::zeros({1, 1}, tg::DType::Int64));
    }
    if (checkpoint.has_optimizer_state) {
      const tg::nn::ParameterArena arena(model);
      const auto optimizer = tg::make_optimizer(arena, checkpoint.header.config, checkpoint.header.settings);
      tg::restore_optimizer(checkpoint, *optimizer);
    }
  } catch (const tg::Error&) {
    // A clean refusal, naming the file and what is wrong with it.
  }
  return 0;
}
