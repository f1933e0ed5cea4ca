#include "tinygpt/inspect/walkthrough_json.h"

#include <nlohmann/json.hpp>

namespace tg::inspect {

using nlohmann::json;

std::string base64_of(const void* data, size_t bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const auto* in = static_cast<const unsigned char*>(data);
  std::string out;
  out.reserve((bytes + 2) / 3 * 4);
  for (size_t at = 0; at < bytes; at += 3) {
    const size_t left = bytes - at;
    const uint32_t group = uint32_t{in[at]} << 16 | (left > 1 ? uint32_t{in[at + 1]} << 8 : 0) |
                           (left > 2 ? uint32_t{in[at + 2]} : 0);
    out += kAlphabet[group >> 18 & 63];
    out += kAlphabet[group >> 12 & 63];
    out += left > 1 ? kAlphabet[group >> 6 & 63] : '=';
    out += left > 2 ? kAlphabet[group & 63] : '=';
  }
  return out;
}

namespace {

json shown_tensor(const ShownTensor& shown) {
  // float32 as the host holds it: x86-64 is little-endian, as the format says.
  const std::vector<float> values = shown.value.to_vector<float>();
  return {{"label", shown.label},
          {"shape", shown.value.shape()},
          {"f32", base64_of(values.data(), values.size() * sizeof(float))}};
}

json stage_json(const Stage& stage, const WalkthroughJsonOptions& options) {
  int64_t values = 0;
  for (const ShownTensor& shown : stage.tensors) values += shown.value.numel();
  const bool omitted = values > options.max_stage_values;
  json tensors = json::array(), gradients = json::array();
  if (!omitted) {
    for (const ShownTensor& shown : stage.tensors) tensors.push_back(shown_tensor(shown));
    for (const ShownTensor& shown : stage.gradients) gradients.push_back(shown_tensor(shown));
  }
  return {{"id", stage.id},
          {"group", stage.group},
          {"title", stage.title},
          {"formula", stage.formula},
          {"explanation", stage.explanation},
          {"implementation", stage.implementation},
          {"input_shapes", stage.input_shapes},
          {"output_shape", stage.output_shape},
          {"view", stage.view == StageView::Attention ? "attention" : "values"},
          {"statistics",
           {{"mean", stage.statistics.mean},
            {"std", stage.statistics.std},
            {"min", stage.statistics.min},
            {"max", stage.statistics.max}}},
          {"notes", stage.notes},
          {"tensors", std::move(tensors)},
          {"gradients", std::move(gradients)},
          {"omitted", omitted}};
}

json loss_json(const LossReport& loss) {
  json targets = json::array(), gradients = json::array();
  for (const TargetProbability& target : loss.targets)
    targets.push_back(
        {{"position", target.position}, {"id", target.id}, {"text", target.text}, {"probability", target.probability}});
  for (const GradientNorm& gradient : loss.gradients)
    gradients.push_back({{"layer", gradient.layer},
                         {"activation_norm", gradient.activation_norm},
                         {"parameter_norm", gradient.parameter_norm}});
  return {{"loss", loss.loss},
          {"perplexity", loss.perplexity},
          {"targets", targets},
          {"gradients", gradients},
          {"stream_gradient_norms", loss.stream_gradient_norms}};
}

}  // namespace

std::string walkthrough_json(const Walkthrough& walkthrough, const WalkthroughOptions& options,
                             const WalkthroughJsonOptions& json_options) {
  json config = walkthrough.config.to_json();
  config["n_kv_head"] = walkthrough.config.kv_heads();  // 0 in the file means "as many as n_head"
  config["head_dim"] = walkthrough.config.head_size();

  json tokens = json::array(), stages = json::array(), predictions = json::array();
  for (const TokenRow& token : walkthrough.tokens)
    tokens.push_back({{"position", token.position}, {"id", token.id}, {"text", token.text}});
  for (const Stage& stage : walkthrough.stages) stages.push_back(stage_json(stage, json_options));
  for (const PositionPredictions& position : walkthrough.predictions) {
    json top = json::array();
    for (const Prediction& prediction : position.top)
      top.push_back({{"id", prediction.id}, {"text", prediction.text}, {"probability", prediction.probability}});
    predictions.push_back({{"position", position.position}, {"token", position.token}, {"top", top}});
  }
  const CausalityCheck& causality = walkthrough.causality;
  const json body = {
      {"object", "explain"},
      {"model", walkthrough.model_description},
      {"milliseconds", json_options.milliseconds},
      {"config", config},
      {"prompt", walkthrough.prompt},
      {"target", walkthrough.target},
      {"prompt_tokens", walkthrough.prompt_tokens},
      {"tokens", tokens},
      {"layer", options.layer ? json(*options.layer) : json(nullptr)},
      {"head", options.head ? json(*options.head) : json(nullptr)},
      {"stages", stages},
      {"predictions", predictions},
      {"loss", walkthrough.loss ? loss_json(*walkthrough.loss) : json(nullptr)},
      {"attribution",
       {{"position", walkthrough.attribution.position},
        {"id", walkthrough.attribution.id},
        {"text", walkthrough.attribution.text},
        {"logit", walkthrough.attribution.logit},
        {"scores", walkthrough.attribution.scores}}},
      {"causality",
       {{"changed_position", causality.changed_position},
        {"original", causality.original},
        {"replacement", causality.replacement},
        {"max_change_earlier", causality.max_change_earlier},
        {"max_change_last", causality.max_change_last}}},
      {"forward_match", walkthrough.forward_match}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace tg::inspect
