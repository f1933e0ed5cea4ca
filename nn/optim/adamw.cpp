#include "tinygpt/nn/optim/adamw.h"

#include "tinygpt/nn/functional/adamw.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

bool is_position_table(const std::string& name) {
  const std::string table = "wpe.weight";
  return name == table || (name.size() > table.size() && name.ends_with("." + table));
}

}  // namespace

bool AdamW::decays(const std::string& name, const Shape& shape, const AdamWOptions& options) {
  return shape.size() >= 2 && (options.decay_position_embeddings || !is_position_table(name));
}

AdamW::AdamW(const ParameterArena& arena, AdamWOptions options, const std::set<std::string>& left_out)
    : arena_(arena), options_(options) {
  check(options.lr >= 0 && options.eps > 0 && options.weight_decay >= 0, "AdamW: needs lr >= 0, eps > 0, weight_decay >= 0, got ",
        options.lr, ", ", options.eps, ", ", options.weight_decay);
  check(options.beta1 >= 0 && options.beta1 < 1 && options.beta2 >= 0 && options.beta2 < 1,
        "AdamW: betas must be in [0, 1), got (", options.beta1, ", ", options.beta2, ")");
  check(layout().dtype() == DType::Float32, "AdamW: the parameters must be float32, got ",
        dtype_name(layout().dtype()));
  size_t left_out_found = 0;
  int64_t state_size = 0;
  for (const ParameterLayout::Slot& slot : layout().slots()) {
    const bool decayed = decays(slot.name, slot.shape, options);
    slot_decays_.push_back(decayed);
    if (left_out.count(slot.name)) {
      ++left_out_found;
      slot_state_offsets_.push_back(-1);
      continue;
    }
    slot_state_offsets_.push_back(state_size);
    const bool continues_run = !runs_.empty() && runs_.back().decays == decayed &&
                               runs_.back().offset + runs_.back().count == slot.offset;
    if (continues_run) runs_.back().count += slot.count;
    else runs_.push_back(Run{slot.offset, state_size, slot.count, decayed});
    state_size += slot.count;
  }
  check(left_out_found == left_out.size(), "AdamW: ", left_out.size() - left_out_found,
        " of the parameters to leave out are not in the arena");
  state_ = AdamWState{zeros({state_size}), zeros({state_size}), 0};
}

void AdamW::step() {
  ProfilePassScope pass(ProfilePass::update);
  ++state_.step;
  raw::begin_in_place_write(arena_.params(), "AdamW");
  float* params = arena_.params().data<float>();
  const float* grads = arena_.grads().data<float>();
  float* m = state_.m.data<float>();
  float* v = state_.v.data<float>();
  std::vector<AdamWSlice> slices;
  for (const Run& run : runs_) {
    const AdamWHyperparameters hyperparameters{
        static_cast<float>(options_.lr), static_cast<float>(options_.beta1), static_cast<float>(options_.beta2),
        static_cast<float>(options_.eps), static_cast<float>(run.decays ? options_.weight_decay : 0.0)};
    slices.push_back({run.offset, run.state_offset, run.count, hyperparameters});
  }
  adamw_step(params, grads, m, v, slices, state_.step);
}

std::vector<std::string> AdamW::names_in_group(bool decayed) const {
  std::vector<std::string> names;
  for (size_t i = 0; i < slot_decays_.size(); ++i)
    if (slot_decays_[i] == decayed && slot_state_offsets_[i] >= 0) names.push_back(layout().slots()[i].name);
  return names;
}

std::vector<NamedTensor> AdamW::state_tensors() const {
  std::vector<NamedTensor> tensors;
  for (size_t i = 0; i < slot_state_offsets_.size(); ++i) {
    if (slot_state_offsets_[i] < 0) continue;
    const ParameterLayout::Slot& slot = layout().slots()[i];
    for (const auto& [prefix, moment] : {std::pair{"optimizer.m.", state_.m}, std::pair{"optimizer.v.", state_.v}})
      tensors.push_back({prefix + slot.name, raw::view(raw::narrow(moment, 0, slot_state_offsets_[i], slot.count), slot.shape)});
  }
  return tensors;
}

std::vector<std::string> AdamW::decayed_names() const { return names_in_group(true); }
std::vector<std::string> AdamW::undecayed_names() const { return names_in_group(false); }

void AdamW::load_state(const Tensor& m, const Tensor& v, int64_t step) {
  const Shape expected = state_.m.shape();
  check(m.shape() == expected && v.shape() == expected, "AdamW::load_state: m and v must have shape ", expected,
        " (one entry per parameter element), got ", m.shape(), " and ", v.shape());
  raw::copy_(state_.m, m);
  raw::copy_(state_.v, v);
  set_step(step);
}

void AdamW::set_step(int64_t step) {
  check(step >= 0, "AdamW: the step must be non-negative, got ", step);
  state_.step = step;
}

}  // namespace tg::nn
