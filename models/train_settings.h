// The hyper-parameters of a training run (everything but the model's shape,
// which is GPTConfig). Saved in every checkpoint, so --resume continues with
// exactly the settings the run started with.
//
// Defaults: nanoGPT's shakespeare_char recipe scaled down for the cpu-small
// model on two cores (fewer iterations, a short warmup). The peak lr is 2e-3:
// with 1e-3 cpu-small reached val 1.918 at step 2000, with 2e-3 it reaches
// 1.827 (nanoGPT's published figure for this config is 1.88; docs/training.md).
#pragma once
#include <cstdint>

#include <nlohmann/json.hpp>

namespace tg {

struct TrainSettings {
  int64_t iters = 2000;         // optimiser steps in the whole run (the schedule ends here)
  uint64_t seed = 1337;         // model initialisation, batches, dropout
  double lr = 2e-3;             // peak learning rate, reached after `warmup` steps
  int64_t warmup = 100;         // linear warmup steps from 0
  double min_lr = 2e-4;         // the cosine decay ends here at step `iters`
  double weight_decay = 0.1;    // AdamW's decoupled decay, on 2-D weights only
  double beta1 = 0.9, beta2 = 0.99;  // beta2 0.99 rather than 0.999: few tokens per step (nanoGPT)
  double eps = 1e-8;
  double grad_clip = 1.0;       // global gradient norm limit; 0 = no clipping
  int64_t eval_interval = 250;  // evaluate (and checkpoint) every this many steps, and at the end
  int64_t eval_iters = 20;      // batches per split in one evaluation

  // Throws tg::Error naming the setting and its value when one is out of range.
  void validate() const;
  nlohmann::json to_json() const;
  static TrainSettings from_json(const nlohmann::json& json);  // validating
};

}  // namespace tg
