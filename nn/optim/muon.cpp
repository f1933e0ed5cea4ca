#include "tinygpt/nn/optim/muon.h"

#include <algorithm>
#include <numeric>

#include "tinygpt/nn/functional/muon.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

Muon::Muon(const ParameterArena& arena, std::vector<MuonMatrix> matrices, MuonOptions options)
    : arena_(arena), matrices_(std::move(matrices)), options_(options) {
  check(options.lr >= 0 && options.weight_decay >= 0 && options.ns_steps >= 1,
        "Muon: needs lr >= 0, weight_decay >= 0 and ns_steps >= 1, got ", options.lr, ", ", options.weight_decay,
        ", ", options.ns_steps);
  check(options.momentum >= 0 && options.momentum < 1, "Muon: momentum must be in [0, 1), got ", options.momentum);
  const ParameterLayout& layout = arena.layout();
  check(layout.dtype() == DType::Float32, "Muon: the parameters must be float32, got ", dtype_name(layout.dtype()));
  int64_t state_size = 0;
  for (MuonMatrix& matrix : matrices_) {
    const auto slot = std::find_if(layout.slots().begin(), layout.slots().end(),
                                   [&](const ParameterLayout::Slot& s) { return s.name == matrix.name; });
    check(slot != layout.slots().end(), "Muon: no parameter '", matrix.name, "' in the model");
    slots_.push_back(static_cast<size_t>(slot - layout.slots().begin()));
    check(slot->shape.size() == 2, "Muon: '", matrix.name, "' has shape ", slot->shape, "; Muon updates 2-D matrices");
    const int64_t rows = slot->shape[0], cols = slot->shape[1];
    if (matrix.row_blocks.empty()) matrix.row_blocks = {rows};
    check(std::accumulate(matrix.row_blocks.begin(), matrix.row_blocks.end(), int64_t{0}) == rows &&
              std::all_of(matrix.row_blocks.begin(), matrix.row_blocks.end(), [](int64_t r) { return r > 0; }),
          "Muon: the row blocks of '", matrix.name, "' must be positive and add up to its ", rows, " rows");
    state_offsets_.push_back(state_size);
    int64_t row = 0;
    for (const int64_t block_rows : matrix.row_blocks) {
      blocks_.push_back(Block{slot->offset + row * cols, state_size + row * cols, block_rows, cols});
      row += block_rows;
    }
    state_size += slot->count;
  }
  for (const Block& block : blocks_) {
    // Per step: A = X X^T, A A and B X, with X (m, n) the wide way round.
    const double m = static_cast<double>(std::min(block.rows, block.cols)), n = static_cast<double>(std::max(block.rows, block.cols));
    newton_schulz_flops_ += static_cast<double>(options.ns_steps) * (2 * m * m * n + 2 * m * m * m + 2 * m * m * n);
  }
  std::stable_sort(blocks_.begin(), blocks_.end(),
                   [](const Block& a, const Block& b) { return a.rows * a.cols > b.rows * b.cols; });
  momentum_ = zeros({state_size});
}

void Muon::step() {
  ProfilePassScope pass(ProfilePass::update);
  ProfileScope scope(ProfileFamily::muon);
  scope.add_flops(newton_schulz_flops_);
  raw::begin_in_place_write(arena_.params(), "Muon");
  float* params = arena_.params().data<float>();
  const float* grads = arena_.grads().data<float>();
  float* momentum = momentum_.data<float>();
  const MuonHyperparameters hyperparameters{options_.lr,       options_.momentum, options_.weight_decay,
                                            options_.ns_steps, options_.nesterov, options_.bf16_products};
  const int64_t blocks = static_cast<int64_t>(blocks_.size());
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t i = 0; i < blocks; ++i) {
    const Block& block = blocks_[static_cast<size_t>(i)];
    muon_step(params + block.param_offset, grads + block.param_offset, momentum + block.state_offset, block.rows,
              block.cols, hyperparameters);
  }
}

std::set<std::string> Muon::names() const {
  std::set<std::string> names;
  for (const MuonMatrix& matrix : matrices_) names.insert(matrix.name);
  return names;
}

std::vector<NamedTensor> Muon::state_tensors() const {
  std::vector<NamedTensor> tensors;
  const ParameterLayout& layout = arena_.layout();
  for (size_t i = 0; i < matrices_.size(); ++i) {
    const ParameterLayout::Slot& slot = layout.slots()[slots_[i]];
    tensors.push_back({"optimizer.momentum." + slot.name,
                       raw::view(raw::narrow(momentum_, 0, state_offsets_[i], slot.count), slot.shape)});
  }
  return tensors;
}

}  // namespace tg::nn
