#include "models/train_settings.h"

#include "tensor/error.h"

namespace tg {

void TrainSettings::validate() const {
  check(iters >= 0, "train: --iters ", iters, " must be >= 0");
  check(lr > 0, "train: --lr ", lr, " must be > 0");
  check(min_lr >= 0 && min_lr <= lr, "train: --min-lr ", min_lr, " must be in [0, lr = ", lr, "]");
  check(warmup >= 0, "train: --warmup ", warmup, " must be >= 0");
  check(weight_decay >= 0, "train: --weight-decay ", weight_decay, " must be >= 0");
  check(beta1 >= 0 && beta1 < 1 && beta2 >= 0 && beta2 < 1, "train: AdamW betas (", beta1, ", ", beta2,
        ") must be in [0, 1)");
  check(eps > 0, "train: AdamW eps ", eps, " must be > 0");
  check(grad_clip >= 0, "train: --grad-clip ", grad_clip, " must be >= 0 (0 = no clipping)");
  check(eval_interval > 0, "train: --eval-interval ", eval_interval, " must be > 0");
  check(eval_iters > 0, "train: --eval-iters ", eval_iters, " must be > 0");
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
    for (const TrainSetting& setting : kTrainSettings)
      std::visit([&](auto member) { json.at(setting.key).get_to(settings.*member); }, setting.member);
  } catch (const nlohmann::json::exception& error) {
    fail("train settings: ", error.what());
  }
  settings.validate();
  return settings;
}

}  // namespace tg
