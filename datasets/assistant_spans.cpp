#include "tinygpt/datasets/assistant_spans.h"

#include <algorithm>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tokenizer/chat_template.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg {

namespace {

std::string rendered(const tokenizer::jinja::Template& chat, const ChatFormat& format,
                     const nlohmann::ordered_json& messages, bool add_generation_prompt, const std::string& where) {
  tokenizer::ChatTemplateOptions options = format.options;
  options.add_generation_prompt = add_generation_prompt;
  try {
    return tokenizer::render_chat(chat, messages, options);
  } catch (const tokenizer::TokenizerError& error) {
    fail(where, ": ", error.what());
  }
}

nlohmann::ordered_json first_messages(const nlohmann::ordered_json& messages, size_t count) {
  nlohmann::ordered_json first = nlohmann::ordered_json::array();
  for (size_t i = 0; i < count; ++i) first.push_back(messages[i]);
  return first;
}

std::string_view trimmed(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return {};
  return text.substr(begin, text.find_last_not_of(" \t\r\n") - begin + 1);
}

// The end of the first end-of-turn text in `text` at or after `from`, or the end of `text` when none is.
size_t end_of_turn(std::string_view text, size_t from, const std::vector<std::string>& end_of_turn_texts) {
  size_t first = std::string_view::npos, end = text.size();
  for (const std::string& marker : end_of_turn_texts) {
    const size_t at = text.find(marker, from);
    if (at < first) first = at, end = at + marker.size();
  }
  return end;
}

}  // namespace

RenderedForTraining render_for_training(const tokenizer::jinja::Template& chat, const ChatFormat& format,
                                        const nlohmann::ordered_json& messages, const std::string& where) {
  RenderedForTraining result;
  result.text = rendered(chat, format, messages, /*add_generation_prompt=*/false, where);
  const std::string& whole = result.text;
  for (size_t i = 0; i < messages.size(); ++i) {
    if (messages[i]["role"] != "assistant") continue;
    const std::string prompt = rendered(chat, format, first_messages(messages, i), true, where);
    const std::string through = rendered(chat, format, first_messages(messages, i + 1), false, where);
    check(whole.starts_with(prompt) && whole.starts_with(through) && through.starts_with(prompt), where,
          ": the chat template (", format.template_source, ") does not render the conversation before message ", i,
          " as the start of the whole, so the assistant's text cannot be found in it; SFT needs a template whose "
          "rendering of a conversation begins with that of its first messages");
    // The content as the template wrote it (Llama 3's trims it), then the end-of-turn text after it.
    const std::string content = messages[i]["content"].get<std::string>();
    const std::string_view core = trimmed(content);
    const size_t content_at = core.empty() ? prompt.size() : through.find(core, prompt.size());
    const size_t content_end = content_at == std::string::npos ? prompt.size() : content_at + core.size();
    const size_t end = end_of_turn(through, content_end, format.end_of_turn_texts);
    if (end > prompt.size()) result.trained.push_back({prompt.size(), end});
  }
  return result;
}

namespace {

std::vector<int64_t> encoded(const tokenizer::TextTokenizer& tokenizer, std::string_view text, const std::string& where) {
  try {
    return tokenizer.encode(text, /*add_special_tokens=*/false);
  } catch (const tokenizer::TokenizerError& error) {
    fail(where, ": cannot encode the rendered conversation with the ", tokenizer.kind(), " tokenizer: ", error.what());
  }
}

// The text encoded whole, an id trained when its bytes overlap a span: for a
// tokenizer whose pieces do not decode back to the text (SentencePiece's prefix
// space before every piece). The ids' bytes must be the text's, but for a space
// the tokenizer put before a piece that had none (after "<s>"); empty when not.
MaskedIds encode_whole(const tokenizer::TextTokenizer& tokenizer, const RenderedForTraining& rendered,
                       const std::string& where) {
  MaskedIds masked;
  masked.ids = encoded(tokenizer, rendered.text, where);
  size_t position = 0, span = 0;
  for (size_t i = 0; i < masked.ids.size(); ++i) {
    // What the id adds to the text so far (a lone first id may drop its prefix space, as decode does).
    std::string bytes = i == 0 ? tokenizer.decode(std::span<const int64_t>(&masked.ids[0], 1))
                               : tokenizer.continuation_bytes(masked.ids[i]);
    if (rendered.text.compare(position, bytes.size(), bytes) != 0 && bytes.starts_with(' ')) bytes.erase(0, 1);
    const size_t end = position + bytes.size();
    if (rendered.text.compare(position, bytes.size(), bytes) != 0) return {};
    while (span < rendered.trained.size() && rendered.trained[span].end <= position) ++span;
    const bool trained = span < rendered.trained.size() && rendered.trained[span].begin < end && !bytes.empty();
    masked.trained.push_back(trained ? 1 : 0);
    position = end;
  }
  if (position != rendered.text.size()) return {};
  return masked;
}

}  // namespace

MaskedIds encode_masked(const tokenizer::TextTokenizer& tokenizer, const RenderedForTraining& rendered,
                        const std::string& where) {
  MaskedIds masked;
  const std::string_view text = rendered.text;
  const auto append = [&](size_t begin, size_t end, bool trained) {
    if (end <= begin) return;
    const std::vector<int64_t> ids = encoded(tokenizer, text.substr(begin, end - begin), where);
    masked.ids.insert(masked.ids.end(), ids.begin(), ids.end());
    masked.trained.insert(masked.trained.end(), ids.size(), trained ? 1 : 0);
  };
  size_t position = 0;
  for (const TextSpan& span : rendered.trained) {
    append(position, span.begin, false);
    append(span.begin, span.end, true);
    position = span.end;
  }
  append(position, text.size(), false);
  if (tokenizer.decode(masked.ids) == text) return masked;
  masked = encode_whole(tokenizer, rendered, where);
  check(!masked.ids.empty(), where, ": the ", tokenizer.kind(), " tokenizer's ids do not decode back to the rendered "
        "conversation, neither encoded in pieces (split where the assistant's text starts and ends) nor whole, so the "
        "mask cannot be placed on them");
  return masked;
}

}  // namespace tg
