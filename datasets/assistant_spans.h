// Which tokens of a conversation a chat model learns from: the assistant's.
//
// A conversation is rendered whole with the model's chat template
// (datasets/chat_format.h). The text of assistant message i is found by
// rendering prefixes, as Hugging Face's apply_chat_template would for a reply:
//
//   prompt_i  = render(messages[:i],   add_generation_prompt=true)   the text before the reply
//   through_i = render(messages[:i+1], add_generation_prompt=false)  the text with it
//
// Both must be prefixes of the whole rendering (a template that rewrites
// earlier turns, such as one that drops old reasoning, has no such prefixes and
// is refused). The trained span starts where prompt_i ends and runs over the
// assistant's content (as the template wrote it: Llama 3's trims it) and the
// end-of-turn text that closes it ("<|im_end|>", "<|eot_id|>", "</s>", ...):
// the model learns to answer and to stop. What the template writes after that
// token (ChatML's "\n") is context, not target.
//
//   <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n
//   ............................................................^^^^^^^^^^^^^^^^.
//
// The ids are encoded a piece at a time, split where training starts or stops,
// so that each id is wholly inside or outside a span: the mask maps exactly
// onto the ids, and the reply's first id is the one generation would start
// with after the prompt. The pieces must decode back to the text. Those of a
// SentencePiece tokenizer that puts a prefix space before every piece (Llama 2,
// Mistral) do not: the text is then encoded whole, and an id is trained when
// its bytes overlap a span ("▁Hello" after "[/INST]" is the assistant's).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tinygpt/datasets/chat_format.h"
#include "tinygpt/tokenizer/jinja/template.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg {

struct TextSpan {
  size_t begin = 0, end = 0;  // bytes [begin, end) of the rendered text
};

struct RenderedForTraining {
  std::string text;               // the whole conversation as the template renders it
  std::vector<TextSpan> trained;  // the assistant's spans, in order, apart
};

// `chat` is format.template_text parsed once. Throws tg::Error starting with
// `where` (e.g. "train: --data chats.jsonl line 7") when the template fails,
// refuses the conversation or breaks the prefix property.
RenderedForTraining render_for_training(const tokenizer::jinja::Template& chat, const ChatFormat& format,
                                        const nlohmann::ordered_json& messages, const std::string& where);

struct MaskedIds {
  std::vector<int64_t> ids;
  std::vector<uint8_t> trained;  // 1 where the id is the assistant's (a target of the loss), one per id
};

// Throws tg::Error starting with `where` when the tokenizer cannot encode the
// text (a character outside a char-level vocabulary) or its ids, of the pieces
// or of the whole, do not decode back to it.
MaskedIds encode_masked(const tokenizer::TextTokenizer& tokenizer, const RenderedForTraining& rendered,
                        const std::string& where);

}  // namespace tg
