// Fuzzes generation from a quantized checkpoint (bfloat16 or int8 weights:
// tinygpt quantize, nn/quantize.h), as `tinygpt sample --ckpt` runs it: the
// checkpoint is loaded and checked, then a few tokens are generated greedily
// through the KV cache, whose decode step (models/gpt_decode.cpp) reads the
// quantized rows and their scales with kernels of its own, and once more
// without the cache. fuzz_checkpoint covers loading and one forward; this
// harness starts from quantized seeds only, so its mutations stay in that
// format. A bad file must be refused with tg::Error (a NaN logit included,
// which generation names); a sanitizer report or a crash is a finding.
#include <cstdint>
#include <vector>

#include "tinygpt/training/checkpoint.h"
#include "tinygpt/models/generate.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/tensor/error.h"
#include "tests/fuzz/memory_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tg::fuzz::MemoryFile file(data, size);
  try {
    const tg::Checkpoint checkpoint = tg::load_checkpoint(file.path());
    if (checkpoint.header.weights == tg::DType::Float32) return 0;  // fuzz_checkpoint's ground
    tg::GPT model(checkpoint.header.config, 0, tg::DType::Float32, /*initialize=*/false);
    tg::restore_parameters(checkpoint, model);
    model.eval();
    tg::GenerationOptions options;
    options.max_new_tokens = 3;
    options.sampling.greedy = true;
    const std::vector<int64_t> prompt = {0};
    for (const bool cache : {true, false}) {
      options.use_cache = cache;
      tg::generate(model, prompt, options, [](int64_t) { return true; });
    }
  } catch (const tg::Error&) {
    // A clean refusal, naming the file and what is wrong with it.
  }
  return 0;
}
