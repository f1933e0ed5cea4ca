// The sampling flags sample and chat share: --temperature (0: greedy), --top-k,
// --top-p, --repetition-penalty, --seed, --greedy.
#pragma once
#include <cstdint>

#include <CLI/CLI.hpp>

#include "tinygpt/models/sampling.h"

namespace tg::cli {

void add_sampling_options(CLI::App& command, SamplingOptions& sampling, uint64_t& seed);

// After parsing: --temperature 0 means greedy (as in llama.cpp and the OpenAI API), and
// without --seed a seed is drawn at random. Validates the options.
void settle_sampling_options(const CLI::App& command, SamplingOptions& sampling, uint64_t& seed);

}  // namespace tg::cli
