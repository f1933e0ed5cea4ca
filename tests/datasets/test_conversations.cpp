// Chat SFT data: the conversation file's refusals, the assistant's spans under
// ChatML, a Hugging Face ChatML tokenizer, Llama 3's and Mistral's templates,
// a template without the prefix property, and the padded, length-grouped batches.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>

#include "tinygpt/datasets/assistant_spans.h"
#include "tinygpt/datasets/conversation_data.h"
#include "tinygpt/datasets/conversation_file.h"
#include "tinygpt/datasets/conversation_split.h"
#include "tinygpt/datasets/length_grouped_batches.h"
#include "tinygpt/tensor/error.h"

using namespace tg;
using nlohmann::ordered_json;

namespace {

ordered_json conversation(std::initializer_list<std::pair<const char*, const char*>> turns) {
  ordered_json messages = ordered_json::array();
  for (const auto& [role, content] : turns) messages.push_back({{"role", role}, {"content", content}});
  return messages;
}

// The texts of the trained ids, one string per run of trained ids.
std::vector<std::string> trained_texts(const tokenizer::TextTokenizer& tokenizer, const MaskedIds& masked) {
  std::vector<std::string> texts;
  std::vector<int64_t> run;
  for (size_t i = 0; i <= masked.ids.size(); ++i) {
    if (i < masked.ids.size() && masked.trained[i]) {
      run.push_back(masked.ids[i]);
    } else if (!run.empty()) {
      texts.push_back(tokenizer.decode(run));
      run.clear();
    }
  }
  return texts;
}

// Renders with `format` and encodes with `tokenizer` (a char vocabulary of the text when null); the
// ids decode back to the text, but for SentencePiece's prefix spaces (`prefix_spaces`).
std::pair<MaskedIds, tokenizer::TextTokenizer> masked_of(const ChatFormat& format, const ordered_json& messages,
                                                         const tokenizer::TextTokenizer* tokenizer = nullptr,
                                                         bool prefix_spaces = false) {
  const tokenizer::jinja::Template chat(format.template_text);
  const RenderedForTraining rendered = render_for_training(chat, format, messages, "test");
  tokenizer::TextTokenizer used = tokenizer ? *tokenizer : chat_vocabulary(rendered.text);
  MaskedIds masked = encode_masked(used, rendered, "test");
  if (!prefix_spaces) CHECK(used.decode(masked.ids) == rendered.text);
  return {std::move(masked), std::move(used)};
}

tokenizer::TextTokenizer fixture_tokenizer(const char* model) {
  return tokenizer::load_tokenizer_directory(std::string("tests/fixtures/hf_llama/") + model);
}

}  // namespace

TEST_CASE("conversation file: blank lines are skipped, lines counted, roles and contents kept") {
  const std::string text =
      "\n{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Hello\", "
      "\"name\": \"bot\"}], \"id\": 3}\n   \n"
      "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"assistant\", \"content\": \"Ok\"}]}";
  const std::vector<Conversation> conversations = parse_conversations(text, "train: --data c.jsonl");
  REQUIRE(conversations.size() == 2);
  CHECK(conversations[0].line == 2);
  CHECK(conversations[1].line == 4);
  CHECK(conversations[0].messages == conversation({{"user", "Hi"}, {"assistant", "Hello"}}));  // "name" dropped
}

TEST_CASE("conversation file: each fault is refused naming the line and what is wrong") {
  const auto refused = [](const std::string& text, const std::string& message) {
    CHECK_THROWS_WITH_AS(parse_conversations(text, "train: --data c.jsonl"), doctest::Contains(message.c_str()), Error);
  };
  const std::string good = "{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"Yo\"}]}\n";
  refused(good + "{\"messages\": [", "train: --data c.jsonl line 2: not valid JSON");
  refused(good + "[1, 2]", "line 2: expected an object {\"messages\"");
  refused("{\"messages\": []}", "line 1: \"messages\" must be a non-empty array");
  refused("{\"messages\": [{\"role\": \"bot\", \"content\": \"x\"}]}", "line 1: message 0 has role \"bot\"; expected system, user or assistant");
  refused("{\"messages\": [{\"role\": \"user\", \"content\": 3}]}", "line 1: message 0 has no \"content\" string");
  refused("{\"messages\": [{\"content\": \"x\"}]}", "line 1: message 0 has no \"role\" string");
  refused("{\"messages\": [\"hi\"]}", "line 1: message 0 is not an object");
  refused("\n\n{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}, {\"role\": \"assistant\", \"content\": \"\"}]}",
          "train: --data c.jsonl line 3: has no assistant text to learn from");
  refused("{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}", "line 1: has no assistant text to learn from");
  refused("\n \n", "holds no conversations");
  refused(std::string(kMaxConversationLineBytes + 1, ' '), "line 1: 4194305 bytes, longer than the 4194304");
  refused(std::string(100, '[') + std::string(100, ']'), "line 1: the JSON nests deeper than 64 levels");
  std::string many = "{\"messages\": [";
  for (size_t i = 0; i <= kMaxConversationMessages; ++i) many += std::string(i ? ", " : "") + "{\"role\": \"assistant\", \"content\": \"a\"}";
  refused(many + "]}", "line 1: 257 messages, more than the 256");
  refused("{\"messages\": [{\"role\": \"user\", \"content\": \"\xff\"}]}", "line 1: not valid JSON");
}

TEST_CASE("assistant spans, ChatML: the trained ids decode to the assistant's text and <|im_end|>, nothing else") {
  const auto [masked, tokenizer] = masked_of(chatml_format(), conversation({{"user", "What is 2+2?"}, {"assistant", "4."}}));
  CHECK(trained_texts(tokenizer, masked) == std::vector<std::string>{"4.<|im_end|>"});
  CHECK(tokenizer.decode(masked.ids) == "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n4.<|im_end|>\n");
}

TEST_CASE("assistant spans, ChatML: every assistant turn of a multi-turn conversation, the system and user turns not") {
  const ordered_json messages = conversation({{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello!"},
                                              {"user", "Name a colour."}, {"assistant", "Red"}});
  const auto [masked, tokenizer] = masked_of(chatml_format(), messages);
  CHECK(trained_texts(tokenizer, masked) == std::vector<std::string>{"Hello!<|im_end|>", "Red<|im_end|>"});
}

TEST_CASE("assistant spans: a Hugging Face ChatML tokenizer (Qwen2's fixture) trains on <|im_end|> as one token") {
  const tokenizer::TextTokenizer qwen = fixture_tokenizer("qwen2");
  const ChatFormat format = chat_format_for(qwen, {});
  const auto [masked, tokenizer] =
      masked_of(format, conversation({{"user", "Hi"}, {"assistant", "Hello there"}, {"user", "Bye"}, {"assistant", "Bye!"}}), &qwen);
  CHECK(trained_texts(tokenizer, masked) == std::vector<std::string>{"Hello there<|im_end|>", "Bye!<|im_end|>"});
  const int64_t im_end = *qwen.token_id("<|im_end|>");
  CHECK(std::count(masked.ids.begin(), masked.ids.end(), im_end) == 5);  // the fixture's system turn, 2 user, 2 assistant
  int64_t trained_ends = 0;
  for (size_t i = 0; i < masked.ids.size(); ++i) trained_ends += masked.ids[i] == im_end && masked.trained[i];
  CHECK(trained_ends == 2);
}

TEST_CASE("assistant spans: Llama 3's template (trimmed content, <|eot_id|>) and Mistral's ([INST], </s>)") {
  const tokenizer::TextTokenizer llama = fixture_tokenizer("llama");
  const auto [masked, tokenizer] = masked_of(chat_format_for(llama, {}),
                                             conversation({{"system", "Terse."}, {"user", "Hi"}, {"assistant", "  Hello  "},
                                                           {"user", "2+2?"}, {"assistant", "4"}}), &llama);
  CHECK(trained_texts(tokenizer, masked) == std::vector<std::string>{"Hello<|eot_id|>", "4<|eot_id|>"});

  const tokenizer::TextTokenizer mistral = fixture_tokenizer("mistral");
  const ChatFormat format = chat_format_for(mistral, {});
  const tokenizer::jinja::Template chat(format.template_text);
  const RenderedForTraining rendered =
      render_for_training(chat, format, conversation({{"user", "Hi"}, {"assistant", "Hello"}}), "test");
  REQUIRE(rendered.trained.size() == 1);
  const std::string span = rendered.text.substr(rendered.trained[0].begin, rendered.trained[0].end - rendered.trained[0].begin);
  CHECK(span.find("Hello") != std::string::npos);
  CHECK(span.ends_with("</s>"));
  CHECK(span.find("[/INST]") == std::string::npos);
  // Its pieces would each get SentencePiece's prefix space: the text is encoded whole, the ids overlapping a span trained.
  const auto [mistral_masked, mistral_used] =
      masked_of(format, conversation({{"user", "Hi"}, {"assistant", "Hello there"}, {"user", "Bye"}, {"assistant", "Ciao"}}), &mistral,
                /*prefix_spaces=*/true);
  CHECK(trained_texts(mistral_used, mistral_masked) == std::vector<std::string>{"Hello there</s>", "Ciao</s>"});
}

TEST_CASE("assistant spans: a template whose prefixes are not prefixes of the whole is refused, naming the message") {
  ChatFormat format = chatml_format();
  // Numbers every turn by the conversation's length: a longer conversation rewrites the earlier turns.
  format.template_text = "{% for message in messages %}{{ messages|length }}{{ message['content'] }}|{% endfor %}";
  const tokenizer::jinja::Template chat(format.template_text);
  CHECK_THROWS_WITH_AS(render_for_training(chat, format, conversation({{"user", "Hi"}, {"assistant", "Yo"}}), "train: --data c.jsonl line 4"),
                       doctest::Contains("train: --data c.jsonl line 4: the chat template (ChatML (the model has no chat "
                                         "template)) does not render the conversation before message 1 as the start of the whole"),
                       Error);
}

TEST_CASE("ConversationSplit: one conversation a row, padded to the longest of the batch with -100 targets; cut to the block") {
  // Conversation 0: 5 ids, 2 trained (ids 3, 4); conversation 1: 3 ids, trained id 2.
  const std::vector<int64_t> ids = {10, 11, 12, 13, 14, 20, 21, 22};
  const ConversationSplit split(TokenSplit("train", ids), {0, 5, 8}, {0, 0, 0, 1, 1, 0, 0, 1});
  CHECK(split.assistant_tokens() == 3);
  const std::vector<int64_t> both = {0, 1};
  Batch batch = split.batch(both, 8);
  CHECK(batch.inputs.shape() == Shape{2, 4});
  CHECK(std::vector<int64_t>(batch.inputs.data<int64_t>(), batch.inputs.data<int64_t>() + 8) ==
        std::vector<int64_t>{10, 11, 12, 13, 20, 21, 0, 0});
  CHECK(std::vector<int64_t>(batch.targets.data<int64_t>(), batch.targets.data<int64_t>() + 8) ==
        std::vector<int64_t>{-100, -100, 13, 14, -100, 22, -100, -100});
  // Block 2: conversation 0 is cut to 2 examples (predicting ids 1 and 2, neither trained): left out.
  const ConversationFit fit = split.fit(2);
  CHECK(fit.cut == 1);
  CHECK(fit.left_out == 1);
  CHECK(fit.usable == 1);
  CHECK(fit.assistant_targets == 1);
  CHECK(split.usable(2) == std::vector<int64_t>{1});
  CHECK(split.fit(3).left_out == 0);
  batch = split.batch(std::vector<int64_t>{0}, 3);
  CHECK(batch.inputs.shape() == Shape{1, 3});
  CHECK(std::vector<int64_t>(batch.targets.data<int64_t>(), batch.targets.data<int64_t>() + 3) == std::vector<int64_t>{-100, -100, 13});
}

TEST_CASE("length_grouped_batches: every item once (filled up from the start), alike lengths together, a function of the generator") {
  std::vector<int64_t> lengths;
  Generator draw(3);
  for (int i = 0; i < 1000; ++i) lengths.push_back(1 + static_cast<int64_t>(draw.next_below(200)));
  Generator generator(11);
  const auto batches = length_grouped_batches(lengths, 8, generator);
  CHECK(batches.size() == 125);
  std::multiset<int64_t> seen;
  for (const auto& batch : batches) {
    CHECK(batch.size() == 8);
    seen.insert(batch.begin(), batch.end());
  }
  CHECK(seen.size() == 1000);
  CHECK(std::set<int64_t>(seen.begin(), seen.end()).size() == 1000);
  Generator again(11);
  CHECK(length_grouped_batches(lengths, 8, again) == batches);
  // Grouped, far less padding than batches in a random order.
  std::vector<std::vector<int64_t>> random_batches;
  for (int64_t b = 0; b < 125; ++b) {
    random_batches.emplace_back();
    for (int64_t i = 0; i < 8; ++i) random_batches.back().push_back(b * 8 + i);
  }
  CHECK(padding_fraction(batches, lengths) < 0.1);
  CHECK(padding_fraction(random_batches, lengths) > 0.3);
  // 10 items in batches of 4: 3 batches, the last filled up with 2 items seen before.
  Generator small(5);
  const auto filled = length_grouped_batches(std::span<const int64_t>(lengths).first(10), 4, small);
  CHECK(filled.size() == 3);
}

TEST_CASE("ConversationSplit::sample_batch: a pure function of the generator's state, one counter a batch, epochs differ") {
  std::vector<int64_t> ids, starts{0};
  std::vector<uint8_t> trained;
  for (int c = 0; c < 30; ++c) {
    for (int i = 0; i < 3 + c % 7; ++i) ids.push_back(c), trained.push_back(i > 1);
    starts.push_back(static_cast<int64_t>(ids.size()));
  }
  const ConversationSplit split(TokenSplit("train", ids), starts, trained);
  Generator generator(42);
  std::vector<std::vector<int64_t>> drawn;
  for (int m = 0; m < 20; ++m) {  // 30 conversations in batches of 4: 8 a epoch
    const Batch batch = split.sample_batch(4, 16, generator);
    drawn.emplace_back(batch.inputs.data<int64_t>(), batch.inputs.data<int64_t>() + batch.inputs.numel());
  }
  CHECK(generator.counter() == 20);
  Generator resumed(0);
  resumed.set_state(42, 13);
  const ConversationSplit copy = split;  // a fresh process: its own caches
  const Batch batch = copy.sample_batch(4, 16, resumed);
  CHECK(std::vector<int64_t>(batch.inputs.data<int64_t>(), batch.inputs.data<int64_t>() + batch.inputs.numel()) == drawn[13]);
  // Epoch 0 (batches 0-7) holds every conversation; epoch 1 is another order.
  std::set<int64_t> first_epoch;
  for (int m = 0; m < 8; ++m) first_epoch.insert(drawn[m].begin(), drawn[m].end());
  CHECK(first_epoch.size() == 30);
  CHECK(std::vector(drawn.begin(), drawn.begin() + 8) != std::vector(drawn.begin() + 8, drawn.begin() + 16));
}
