// Refusing a model the machine cannot hold, before allocating it.
//
// A config's sizes come from files and flags (a 1 KB checkpoint can declare
// n_layer = 10^9). Allocating first and failing later took tens of seconds and
// gigabytes, then ended in a bare std::bad_alloc; instead the weights' size is
// computed from the config (GPTConfig::parameter_count, checked arithmetic) and
// compared with the memory this machine has available.
#pragma once
#include <cstdint>

#include "tinygpt/models/gpt_config.h"

namespace tg {

// Bytes of memory available to a new allocation now: MemAvailable of
// /proc/meminfo, or the physical memory where that is not readable.
int64_t available_memory_bytes();

// Throws tg::Error with both figures when the float32 weights of `config`
// alone would not fit in the available memory.
void check_model_fits(const GPTConfig& config);

}  // namespace tg
