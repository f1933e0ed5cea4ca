#include "tinygpt/inspect/walkthrough_stage_log.h"

#include <algorithm>
#include <cmath>

#include "tinygpt/inspect/format.h"
#include "tinygpt/tensor/view.h"

namespace tg::inspect {

namespace {

double variance_of(const std::vector<double>& values) {  // population, as LayerNorm's
  const double mean = mean_of(values);
  double total = 0;
  for (double value : values) total += (value - mean) * (value - mean);
  return total / static_cast<double>(values.size());
}

double norm_of(const std::vector<double>& values) {
  double total = 0;
  for (double value : values) total += value * value;
  return std::sqrt(total);
}

}  // namespace

std::vector<std::vector<double>> rows_of(const Tensor& x) {
  const std::vector<double> values = x.detach().to_vector<double>();
  const size_t width = static_cast<size_t>(x.size(-1));
  std::vector<std::vector<double>> rows;
  for (size_t start = 0; start < values.size(); start += width)
    rows.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(start),
                      values.begin() + static_cast<std::ptrdiff_t>(start + width));
  return rows;
}

double mean_of(const std::vector<double>& values) {
  double total = 0;
  for (double value : values) total += value;
  return total / static_cast<double>(values.size());
}

std::string range_text(const std::vector<double>& values) {
  if (values.empty()) return "[]";
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  std::string text = "[";
  text += number(*low);
  text += ", ";
  text += number(*high);
  return text + "]";
}

std::string row_moments(const Tensor& x) {
  std::vector<double> means, variances;
  for (const std::vector<double>& row : rows_of(x)) {
    means.push_back(mean_of(row));
    variances.push_back(variance_of(row));
  }
  return "row means in " + range_text(means) + ", row variances in " + range_text(variances);
}

std::vector<double> row_rms(const Tensor& x) {
  std::vector<double> rms;
  for (const std::vector<double>& row : rows_of(x))
    rms.push_back(norm_of(row) / std::sqrt(static_cast<double>(row.size())));
  return rms;
}

double mean_row_norm(const Tensor& x) {
  double total = 0;
  const auto rows = rows_of(x);
  for (const std::vector<double>& row : rows) total += norm_of(row);
  return total / static_cast<double>(rows.size());
}

std::string negative_share(const Tensor& x) {
  const std::vector<double> values = x.detach().to_vector<double>();
  const auto negative = std::count_if(values.begin(), values.end(), [](double value) { return value < 0; });
  return number(100.0 * static_cast<double>(negative) / static_cast<double>(values.size())) + "%";
}

void StageLog::enter(const std::string& group, const std::string& id_prefix, bool shown) {
  group_ = group;
  id_prefix_ = id_prefix;
  shown_ = shown;
}

void StageLog::enter_block(int64_t layer) {
  enter("Block " + std::to_string(layer), "block" + std::to_string(layer) + ".",
        !options_.layer || *options_.layer == layer);
}

Stage* StageLog::add_values(const std::string& kind, const Shapes& inputs, const Tensor& output,
                            std::vector<ShownTensor> extra_views) {
  Stage* stage = add(kind, inputs, output, StageView::Values);
  if (!stage) return nullptr;
  stage->tensors.push_back({"output", shown_tensor(output)});
  outputs_.push_back({stages_.size() - 1, output, {}});
  for (ShownTensor& view : extra_views) stage->tensors.push_back(std::move(view));
  return stage;
}

Stage* StageLog::add_per_head(const std::string& kind, const Shapes& inputs, const Tensor& output, StageView view) {
  Stage* stage = add(kind, inputs, output, view);
  if (!stage) return nullptr;
  const int64_t heads = output.size(1), group = config_.n_head / heads;  // group: query heads per head shown
  StageOutput& recorded = outputs_.emplace_back(StageOutput{stages_.size() - 1, output, {}});
  for (int64_t head = 0; head < heads; ++head) {
    if (options_.head && *options_.head / group != head) continue;
    recorded.heads.push_back(head);
    std::string label = "head " + std::to_string(head);
    if (group > 1)
      label = "KV head " + std::to_string(head) + " (query heads " + std::to_string(head * group) + ".." +
              std::to_string(head * group + group - 1) + ")";
    stage->tensors.push_back({label, shown_tensor(raw::select(raw::select(output, 0, 0), 0, head))});
  }
  return stage;
}

Stage* StageLog::add(const std::string& kind, const Shapes& inputs, const Tensor& output, StageView view) {
  if (!shown_) return nullptr;
  Stage stage = make_stage(id_prefix_, kind, group_, config_, tokenizer_kind_);
  stage.input_shapes = inputs;
  stage.output_shape = output.shape();
  stage.view = view;
  stage.statistics = statistics_of(output.detach());
  stages_.push_back(std::move(stage));
  return &stages_.back();
}

Tensor BlockParameters::operator[](const std::string& name) const {
  const auto found = parameters_.find(prefix_ + name);
  return found == parameters_.end() ? Tensor() : found->second;
}

}  // namespace tg::inspect
