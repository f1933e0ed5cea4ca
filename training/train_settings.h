// The hyper-parameters of a training run (everything but the model's shape,
// which is GPTConfig). Saved in every checkpoint, so --resume continues with
// exactly the settings the run started with.
//
// Defaults: nanoGPT's shakespeare_char recipe scaled down for the cpu-small
// model on two cores (fewer iterations, a short warmup). The peak lr is 2e-3:
// with 1e-3 cpu-small reached val 1.918 at step 2000, with 2e-3 it reaches
// 1.827 (nanoGPT's published figure for this config is 1.88; docs/training.md).
// The train command takes each preset's own peak lr (preset_learning_rate);
// min_lr follows lr (nanoGPT's lr / 10) unless it is set.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "tinygpt/models/lora_config.h"
#include "tinygpt/nn/optim/schedule.h"

namespace tg {

struct TrainSettings {
  int64_t iters = 2000;         // optimiser steps in the whole run (the schedule ends here)
  uint64_t seed = 1337;         // model initialisation, batches, dropout
  double lr = 2e-3;             // peak learning rate, reached after `warmup` steps
  int64_t warmup = 100;         // linear warmup steps from 0
  double min_lr = -1;           // the cosine decay ends here; -1: lr / 10 (resolve_defaults)
  // The cosine reaches min_lr at this step and holds there; -1: at `iters`. A run
  // extended past it on resume trains on at min_lr instead of re-stretching the cosine.
  int64_t decay_iters = -1;
  double weight_decay = 0.1;    // AdamW's decoupled decay, on 2-D weights only
  double beta1 = 0.9, beta2 = 0.99;  // beta2 0.99 rather than 0.999: few tokens per step (nanoGPT)
  double eps = 1e-8;
  double grad_clip = 1.0;       // global gradient norm limit; 0 = no clipping
  int64_t grad_accum = 1;       // micro-batches of B per optimiser step (the gradients add up)
  int64_t eval_interval = 250;  // evaluate (and checkpoint) every this many steps, and at the end
  int64_t eval_iters = 20;      // batches per split in one evaluation
  int64_t save_interval = 0;    // also write DIR/model.safetensors every this many steps; 0: at evaluations only
  int64_t bf16_matmul = 0;      // 1: the Linear products in bfloat16 (train --dtype bf16), kept on resume
  std::string optimizer = "adamw";  // or "muon": Muon for the hidden matrices, AdamW for the rest (nn/optim/optimizer.h)
  double muon_lr = 0.02;        // Muon's peak rate; the schedule scales it as it scales lr
  double muon_momentum = 0.95;
  int64_t muon_ns_steps = 5;
  double muon_weight_decay = 0.0;
  std::string schedule = "cosine";  // or "wsd": warmup, constant, then a linear decay over the last `cooldown`
  double cooldown = 0.2;        // wsd: the fraction of decay_iters spent decaying to min_lr
  double target_loss = 0;       // stop at the first evaluation whose val loss is at most this; 0: never
  int64_t eval_whole_val = 0;   // 1: evaluations score every token of the val split once (models/evaluate.h)
  // LoRA (models/lora_config.h): rank 0 trains every weight; a rank > 0 freezes them and trains
  // adapters of that rank on the projections lora_targets names, scaled by lora_alpha / rank.
  int64_t lora_rank = 0;
  double lora_alpha = 16;
  double lora_dropout = 0;
  std::string lora_targets = "all-linear";
  std::string lora_base = "float32";  // or bfloat16 / int8: the frozen weights held quantized (QLoRA)
  std::string init_from;        // the model the run started from (--init-from), for an adapter's base_model_name_or_path

  // min_lr and decay_iters given as -1 become lr / 10 and iters: a run's checkpoint holds the values used.
  void resolve_defaults();
  double decay_end_lr() const { return min_lr < 0 ? lr / 10 : min_lr; }
  int64_t decay_end() const { return decay_iters < 0 ? iters : decay_iters; }
  // The learning-rate schedule these settings describe (the warmup capped at the decay's end).
  nn::LearningRateSchedule lr_schedule() const {
    return {schedule == "wsd" ? nn::ScheduleShape::WarmupStableDecay : nn::ScheduleShape::Cosine, lr, decay_end_lr(),
            std::min(warmup, decay_end()), decay_end(), cooldown};
  }

  // The adapters these settings ask for, checked against the model (none when lora_rank is 0).
  std::optional<LoraConfig> lora(const GPTConfig& config) const;

  // Throws tg::Error naming the setting and its value when one is out of range.
  void validate() const;
  nlohmann::json to_json() const;
  static TrainSettings from_json(const nlohmann::json& json);  // validating
};

// One row per field of TrainSettings: the list to_json, from_json and the train
// command's flags are all built from, so a setting is added in one place.
struct TrainSetting {
  const char* key;  // in JSON; the flag is "--" + key with '-' for '_' (min_lr: --min-lr)
  std::variant<int64_t TrainSettings::*, uint64_t TrainSettings::*, double TrainSettings::*,
               std::string TrainSettings::*>
      member;
  const char* help;  // the flag's help; nullptr: no flag (saved in checkpoints all the same)
  bool resumable;    // a resumed run may change it (the seed may not: the batches and dropout follow from it)
  bool added_later = false;  // checkpoints written before it existed lack it: the default applies
};

inline constexpr TrainSetting kTrainSettings[] = {
    {"iters", &TrainSettings::iters, "Optimiser steps in the whole run", true},
    {"seed", &TrainSettings::seed, "Seed of the initial weights, the batches and dropout", false},
    {"lr", &TrainSettings::lr,
     "Peak learning rate (default: the preset's: cpu-small 2e-3, baby 1e-3, gpt2 6e-4; a twentieth of it with "
     "--init-from)", true},
    {"warmup", &TrainSettings::warmup, "Linear warmup steps", true},
    {"min_lr", &TrainSettings::min_lr, "Learning rate at the end of the cosine decay (default: --lr / 10)", true},
    {"decay_iters", &TrainSettings::decay_iters,
     "Step at which the cosine reaches --min-lr, which then holds (default: --iters of the run's start)", true, true},
    {"weight_decay", &TrainSettings::weight_decay, "AdamW weight decay (2-D weights)", true},
    {"beta1", &TrainSettings::beta1, nullptr, false},
    {"beta2", &TrainSettings::beta2, nullptr, false},
    {"eps", &TrainSettings::eps, nullptr, false},
    {"grad_clip", &TrainSettings::grad_clip, "Clip the global gradient norm to this (0 = off)", true},
    {"grad_accum", &TrainSettings::grad_accum, "Micro-batches per optimiser step (gradient accumulation)", true, true},
    {"eval_interval", &TrainSettings::eval_interval, "Evaluate and checkpoint every N steps", true},
    {"eval_iters", &TrainSettings::eval_iters, "Batches per split in one evaluation", true},
    {"save_interval", &TrainSettings::save_interval,
     "Also save DIR/model.safetensors every N steps between evaluations (0: at evaluations only)", true, true},
    {"bf16_matmul", &TrainSettings::bf16_matmul, nullptr, true, true},  // the train command's --dtype
    {"optimizer", &TrainSettings::optimizer,
     "adamw, or muon: Muon for the blocks' matrices, AdamW (--lr) for embeddings, head, norms and biases", false, true},
    {"muon_lr", &TrainSettings::muon_lr, "Muon's peak learning rate (--optimizer muon)", true, true},
    {"muon_momentum", &TrainSettings::muon_momentum, "Muon's Nesterov momentum", false, true},
    {"muon_ns_steps", &TrainSettings::muon_ns_steps, "Muon's Newton-Schulz iterations", true, true},
    {"muon_weight_decay", &TrainSettings::muon_weight_decay, "Muon's decoupled weight decay", true, true},
    {"schedule", &TrainSettings::schedule,
     "Learning-rate schedule after the warmup: cosine (to --min-lr at --decay-iters) or wsd (constant, then linear "
     "to --min-lr over the last --cooldown of --decay-iters)", true, true},
    {"cooldown", &TrainSettings::cooldown, "wsd: the fraction of --decay-iters spent decaying", true, true},
    {"target_loss", &TrainSettings::target_loss,
     "Stop at the first evaluation whose val loss is at most this, saving the run (0: never)", true, true},
    {"eval_whole_val", &TrainSettings::eval_whole_val,
     "1: each evaluation scores every token of the val split once, in windows of the block size (0: --eval-iters "
     "random batches)", true, true},
    {"lora_rank", &TrainSettings::lora_rank,
     "LoRA: freeze the weights of --init-from's model and train rank-R adapters (0: train every weight)", false, true},
    {"lora_alpha", &TrainSettings::lora_alpha, "LoRA: the adapters' update is scaled by alpha / rank", false, true},
    {"lora_dropout", &TrainSettings::lora_dropout, "LoRA: dropout on the adapters' input", true, true},
    {"lora_targets", &TrainSettings::lora_targets,
     "LoRA: the projections adapted, comma-separated: q, k, v, o, gate, up, down (or q_proj ... down_proj, GPT-2's "
     "c_attn, c_proj, c_fc), attn, mlp or all-linear", false, true},
    {"lora_base", &TrainSettings::lora_base,
     "LoRA: hold the frozen weights in float32, bf16 or int8 (QLoRA: their products read the quantized weights)", false,
     true},
    {"init_from", &TrainSettings::init_from, nullptr, false, true},
};

}  // namespace tg
