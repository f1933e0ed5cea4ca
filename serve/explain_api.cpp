#include "tinygpt/serve/explain_api.h"

#include <chrono>

#include "tinygpt/inspect/walkthrough_json.h"
#include "tinygpt/serve/request_fields.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg::serve {

using nlohmann::json;

namespace {

std::string text_field(const json& body, const char* name) {
  const json* value = field(body, name);
  if (!value) return "";
  if (!value->is_string()) refuse(name, "must be a string, got " + value->dump());
  return value->get<std::string>();
}

int64_t token_count(const ServedModel& model, const std::string& text, const char* name) {
  try {
    return static_cast<int64_t>(model.tokenizer->encode(text).size());
  } catch (const tokenizer::TokenizerError& error) {
    refuse(name, std::string("cannot be tokenised: ") + error.what());
  }
}

}  // namespace

ExplainRequest parse_explain_request(std::string_view body_text, const ServedModel& model, const GPTConfig& config) {
  const json body = parse_body(body_text);
  if (const json* name = field(body, "model"); name && *name != json(model.id))
    throw ApiError(404, "the model " + name->dump() + " does not exist; this server has '" + model.id + "'", "model",
                   "model_not_found");
  ExplainRequest request;
  if (!field(body, "prompt")) refuse("prompt", "is required: the text to follow through the model");
  request.prompt = text_field(body, "prompt");
  if (request.prompt.empty()) refuse("prompt", "is empty; give the text to follow through the model");
  request.options.target = text_field(body, "target");
  // A model of 0 layers (the course's bigram) has no block to show: no layer is chosen.
  if (config.n_layer > 0) request.options.layer = integer_field(body, "layer", 0, config.n_layer - 1).value_or(0);
  else if (field(body, "layer")) refuse("layer", "names a block, and this model has none (0 layers)");
  request.options.head = integer_field(body, "head", 0, config.n_head - 1);
  request.options.top_k = integer_field(body, "top_k", 1, 20).value_or(5);
  request.options.attribute_position = integer_field(body, "attribute_position", 0, config.block_size - 1);
  request.options.model_description = model.id;

  const int64_t tokens = token_count(model, request.prompt, "prompt") +
                         (request.options.target.empty() ? 0 : token_count(model, request.options.target, "target"));
  if (tokens > config.block_size)
    throw ApiError(400,
                   std::string("the prompt") + (request.options.target.empty() ? " makes " : " and target make ") +
                       std::to_string(tokens) + " tokens; the model's context is " +
                       std::to_string(config.block_size),
                   "prompt", "context_length_exceeded");
  if (request.options.attribute_position && *request.options.attribute_position >= tokens)
    refuse("attribute_position", "is " + std::to_string(*request.options.attribute_position) + ", but the text has " +
                                     std::to_string(tokens) + " tokens (positions 0 to " + std::to_string(tokens - 1) +
                                     ")");
  return request;
}

std::string explain_answer(GPT& model, const ServedModel& served, const ExplainRequest& request, int64_t max_values) {
  const auto started = std::chrono::steady_clock::now();
  const inspect::Walkthrough walkthrough = inspect::walk_through(model, *served.tokenizer, request.prompt, request.options);
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - started;
  int64_t values = 0;
  for (const inspect::Stage& stage : walkthrough.stages)
    for (const inspect::ShownTensor& shown : stage.tensors) values += shown.value.numel();
  if (values > max_values)
    throw ApiError(400, "the step-through of " + std::to_string(walkthrough.tokens.size()) + " tokens holds " +
                            std::to_string(values) + " numbers, more than this server sends at once (" +
                            std::to_string(max_values) + "); ask for one head (\"head\") or a shorter prompt",
                   "head");
  return inspect::walkthrough_json(walkthrough, request.options, {.milliseconds = took.count()});
}

}  // namespace tg::serve
