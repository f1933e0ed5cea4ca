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
  return {{"iters", iters},         {"seed", seed},
          {"lr", lr},               {"warmup", warmup},
          {"min_lr", min_lr},       {"weight_decay", weight_decay},
          {"beta1", beta1},         {"beta2", beta2},
          {"eps", eps},             {"grad_clip", grad_clip},
          {"eval_interval", eval_interval}, {"eval_iters", eval_iters}};
}

TrainSettings TrainSettings::from_json(const nlohmann::json& json) {
  TrainSettings settings;
  try {
    json.at("iters").get_to(settings.iters);
    json.at("seed").get_to(settings.seed);
    json.at("lr").get_to(settings.lr);
    json.at("warmup").get_to(settings.warmup);
    json.at("min_lr").get_to(settings.min_lr);
    json.at("weight_decay").get_to(settings.weight_decay);
    json.at("beta1").get_to(settings.beta1);
    json.at("beta2").get_to(settings.beta2);
    json.at("eps").get_to(settings.eps);
    json.at("grad_clip").get_to(settings.grad_clip);
    json.at("eval_interval").get_to(settings.eval_interval);
    json.at("eval_iters").get_to(settings.eval_iters);
  } catch (const nlohmann::json::exception& error) {
    fail("train settings: ", error.what());
  }
  settings.validate();
  return settings;
}

}  // namespace tg
