// POST /v1/explain: the live step-through's data. The request names a prompt
// (and a target, a block, a head); the answer is the walk-through of that prompt
// through the served model as inspect/walkthrough_json.h writes it. The fields
// are in docs/walkthrough/live.md; the page that draws them is
// serve/explain_page.html, at GET /explain.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "tinygpt/inspect/walkthrough.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/serve/openai_api.h"

namespace tg::serve {

struct ExplainRequest {
  std::string prompt;
  inspect::WalkthroughOptions options;  // layer: 0 unless the request names one
};

// Reads and checks the body: "prompt" (required, not empty), "target", "layer",
// "head" and "top_k" against the model; the prompt and target must fit in the
// context together. Throws ApiError (400) naming the field.
ExplainRequest parse_explain_request(std::string_view body, const ServedModel& model, const GPTConfig& config);

// The walk-through as JSON. Runs the model: call it on the engine's thread
// (Engine::run_on_model). An answer of more than `max_values` numbers (every
// head of a long prompt in a large model) is refused with a 400 saying to ask
// for one head or a shorter prompt.
std::string explain_answer(GPT& model, const ServedModel& served, const ExplainRequest& request, int64_t max_values);

}  // namespace tg::serve
