// Fuzzes the reading of a stranger's request body by tinygpt serve: the first
// byte picks the endpoint (/v1/completions, /v1/chat/completions, /v1/explain),
// the rest is the body, read against the Llama fixture's tokenizer and chat
// template as serve would (serve/openai_requests.cpp, serve/explain_api.cpp).
// Every refusal must be an ApiError of status 400 (or 404 for another model's
// name) with a message; an accepted request must be one the engine or the
// walk-through can run as it is: ids in the vocabulary, a prompt that leaves
// room in the context, a token budget within the server's cap, sampling options
// that validate, a layer and head the model has.
#include <cstdint>
#include <string>
#include <string_view>

#include "tinygpt/models/gpt_config.h"
#include "tinygpt/serve/explain_api.h"
#include "tinygpt/serve/openai_api.h"
#include "tests/fuzz/property.h"

namespace {

constexpr int64_t kContext = 128, kMaxTokens = 64;

struct Served {
  tg::tokenizer::TextTokenizer tokenizer = tg::tokenizer::load_tokenizer_directory("tests/fixtures/hf_llama/llama");
  tg::ChatFormat format = tg::chat_format_for(tokenizer, {301});
  tg::GPTConfig config = [] {
    tg::GPTConfig config = tg::GPTConfig::preset_named("llama-small", 320);
    config.n_layer = 2;
    config.block_size = kContext;
    return config;
  }();
  tg::serve::ServedModel model() const {
    tg::serve::ServedModel served;
    served.id = "llama";
    served.tokenizer = &tokenizer;
    served.chat_format = &format;
    served.text_stop_ids = {301};
    served.context = kContext;
    served.max_tokens = kMaxTokens;
    return served;
  }
};

void check_completion(const tg::serve::ApiRequest& request, const Served& served) {
  const tg::serve::CompletionRequest& completion = request.completion;
  const auto prompt_tokens = static_cast<int64_t>(completion.prompt.size());
  tg::fuzz::check_property(prompt_tokens >= 1 && prompt_tokens < kContext, "a prompt of 1 to context - 1 ids");
  for (int64_t id : completion.prompt)
    tg::fuzz::check_property(id >= 0 && id < served.tokenizer.vocab_size(), "every prompt id in the vocabulary");
  tg::fuzz::check_property(completion.max_new_tokens >= 1 && completion.max_new_tokens <= kMaxTokens,
                           "max_new_tokens within 1 .. the server's cap");
  tg::fuzz::check_property(request.stop_texts.size() <= 4, "at most 4 stop texts");
  for (const std::string& text : request.stop_texts) tg::fuzz::check_property(!text.empty(), "no empty stop text");
  try {
    completion.sampling.validate();
  } catch (const tg::Error&) {
    tg::fuzz::check_property(false, "accepted sampling options validate");
  }
}

void check_explain(const tg::serve::ExplainRequest& request, const Served& served) {
  tg::fuzz::check_property(!request.prompt.empty(), "an explained prompt is not empty");
  const auto& options = request.options;
  tg::fuzz::check_property(options.layer && *options.layer >= 0 && *options.layer < served.config.n_layer,
                           "the explained layer exists");
  tg::fuzz::check_property(!options.head || (*options.head >= 0 && *options.head < served.config.n_head),
                           "the explained head exists");
  tg::fuzz::check_property(options.top_k >= 1 && options.top_k <= 20, "top_k in 1 .. 20");
  const auto tokens = static_cast<int64_t>(served.tokenizer.encode(request.prompt).size() +
                                           (options.target.empty() ? 0 : served.tokenizer.encode(options.target).size()));
  tg::fuzz::check_property(tokens <= kContext, "the prompt and target fit in the context");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Served served;
  if (size == 0) return 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 3) {
      case 0: check_completion(parse_request(tg::serve::Endpoint::Completions, body, served.model()), served); break;
      case 1: check_completion(parse_request(tg::serve::Endpoint::ChatCompletions, body, served.model()), served); break;
      default: check_explain(parse_explain_request(body, served.model(), served.config), served); break;
    }
  } catch (const tg::serve::ApiError& error) {
    tg::fuzz::check_property(error.status == 400 || error.status == 404, "a refusal is a 400 or a 404");
    tg::fuzz::check_property(error.what()[0] != '\0', "a refusal says why");
  }
  return 0;
}
