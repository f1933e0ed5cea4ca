#include "tinygpt/training/train_settings.h"

#include <optional>
#include <type_traits>

#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/error.h"

namespace tg {

std::optional<LoraConfig> TrainSettings::lora(const GPTConfig& config) const {
  if (lora_rank == 0) return std::nullopt;
  LoraConfig lora;
  lora.settings = {lora_rank, lora_alpha, lora_dropout};
  lora.targets = parse_lora_targets(lora_targets, config, "train: --lora-targets");
  return lora;
}

void TrainSettings::validate() const {
  check(iters >= 0, "train: --iters must be an integer >= 0, got ", iters);
  check(lr > 0, "train: --lr must be a number > 0, got ", lr);
  check(min_lr == -1 || (min_lr >= 0 && min_lr <= lr), "train: --min-lr must be a number from 0 to --lr (", lr,
        "), got ", min_lr);
  check(decay_iters >= -1, "train: --decay-iters must be an integer >= 0, got ", decay_iters);
  check(warmup >= 0, "train: --warmup must be an integer >= 0, got ", warmup);
  check(weight_decay >= 0, "train: --weight-decay must be a number >= 0, got ", weight_decay);
  check(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, "train: AdamW betas (", beta1, ", ", beta2,
        ") must be in [0, 1)");
  check(eps > 0, "train: AdamW eps ", eps, " must be > 0");
  check(grad_clip >= 0, "train: --grad-clip must be a number >= 0 (0 = no clipping), got ", grad_clip);
  check(grad_accum > 0, "train: --grad-accum must be a positive integer, got ", grad_accum);
  check(eval_interval > 0, "train: --eval-interval must be a positive integer, got ", eval_interval);
  check(eval_iters > 0, "train: --eval-iters must be a positive integer, got ", eval_iters);
  check(bf16_matmul == 0 || bf16_matmul == 1, "train: bf16_matmul must be 0 or 1, got ", bf16_matmul);
  check(optimizer == "adamw" || optimizer == "muon", "train: --optimizer must be adamw or muon, got '", optimizer, "'");
  check(muon_lr >= 0, "train: --muon-lr must be a number >= 0, got ", muon_lr);
  check(muon_momentum >= 0 && muon_momentum < 1, "train: --muon-momentum must be in [0, 1), got ", muon_momentum);
  check(muon_ns_steps >= 1 && muon_ns_steps <= 100, "train: --muon-ns-steps must be an integer from 1 to 100, got ",
        muon_ns_steps);
  check(muon_weight_decay >= 0, "train: --muon-weight-decay must be a number >= 0, got ", muon_weight_decay);
  check(schedule == "cosine" || schedule == "wsd", "train: --schedule must be cosine or wsd, got '", schedule, "'");
  check(cooldown >= 0 && cooldown <= 1, "train: --cooldown must be a fraction from 0 to 1, got ", cooldown);
  check(target_loss >= 0, "train: --target-loss must be a number >= 0 (0: never), got ", target_loss);
  check(eval_whole_val == 0 || eval_whole_val == 1, "train: --eval-whole-val must be 0 or 1, got ", eval_whole_val);
  check(lora_rank >= 0 && lora_rank <= 65536, "train: --lora-rank must be an integer from 0 to 65536, got ", lora_rank);
  check(lora_alpha > 0, "train: --lora-alpha must be a number > 0, got ", lora_alpha);
  check(lora_dropout >= 0 && lora_dropout < 1, "train: --lora-dropout must be in [0, 1), got ", lora_dropout);
  check(lora_base == "float32" || lora_base == "bfloat16" || lora_base == "int8", "train: --lora-base must be float32, ",
        "bfloat16 or int8, got '", lora_base, "'");
  check(lora_base == "float32" || lora_rank > 0, "train: --lora-base ", lora_base, " holds the frozen weights of a LoRA ",
        "run: give --lora-rank too");
  check(lora_rank == 0 || optimizer == "adamw", "train: --optimizer ", optimizer,
        " does not train LoRA adapters; they train with adamw");
  check(save_interval >= 0, "train: --save-interval must be an integer >= 0 (0 = at evaluations only), got ",
        save_interval);
}

void TrainSettings::resolve_defaults() {
  min_lr = decay_end_lr();
  decay_iters = decay_end();
}

nlohmann::json TrainSettings::to_json() const {
  nlohmann::json json = nlohmann::json::object();
  for (const TrainSetting& setting : kTrainSettings)
    std::visit([&](auto member) { json[setting.key] = this->*member; }, setting.member);
  return json;
}

TrainSettings TrainSettings::from_json(const nlohmann::json& json) {
  TrainSettings settings;
  try {
    for (const TrainSetting& setting : kTrainSettings) {
      if (setting.added_later && !json.contains(setting.key)) continue;  // the default, resolved below
      std::visit(
          [&](auto member) {
            const nlohmann::json& value = json.at(setting.key);
            using Field = std::remove_reference_t<decltype(settings.*member)>;
            // Checked: nlohmann's get_to would read 2.5 as 2, and a double past the integer's range is
            // undefined behaviour.
            if constexpr (std::is_integral_v<Field>) {
              const std::optional<Field> integer = json_integer<Field>(value);
              check(integer.has_value(), "train settings: '", setting.key, "' must be an integer that fits ",
                    std::is_signed_v<Field> ? "int64" : "uint64", ", got ",
                    value.is_number() ? value.dump() : value.type_name());
              settings.*member = *integer;
            } else {
              value.get_to(settings.*member);
            }
          },
          setting.member);
    }
  } catch (const nlohmann::json::exception& error) {
    fail("train settings: ", json_error_text(error));
  }
  // A checkpoint from before decay_iters existed decays to its own iters, where its schedule ended.
  settings.resolve_defaults();
  settings.validate();
  return settings;
}

}  // namespace tg
