#include "cli/sampling_flags.h"

#include <random>

#include "cli/flag_checks.h"

namespace tg::cli {

void add_sampling_options(CLI::App& command, SamplingOptions& sampling, uint64_t& seed) {
  command.add_option("--temperature", sampling.temperature, "Divide the logits by this (0: greedy)")
      ->capture_default_str()
      ->check(non_negative_number());
  command.add_option("--top-k", sampling.top_k, "Sample among the K most likely tokens only (0 = all)")
      ->capture_default_str()
      ->check(non_negative_integer());
  command.add_option("--top-p", sampling.top_p, "Sample from the smallest set of tokens with this much probability")
      ->capture_default_str()
      ->check(fraction_up_to_one());
  command.add_option("--repetition-penalty", sampling.repetition_penalty,
                     "Make tokens already in the text less likely (> 1) or more likely (< 1)")
      ->capture_default_str()
      ->check(positive_number());
  command.add_option("-s,--seed", seed, "Seed of the sampling (default: drawn at random)");
  command.add_flag("--greedy", sampling.greedy, "Always take the most likely token");
}

void settle_sampling_options(const CLI::App& command, SamplingOptions& sampling, uint64_t& seed) {
  if (!command.count("--seed")) seed = std::random_device{}();
  if (sampling.temperature == 0) {  // as in llama.cpp and the OpenAI API
    sampling.greedy = true;
    sampling.temperature = 1;
  }
  sampling.validate();
}

}  // namespace tg::cli
