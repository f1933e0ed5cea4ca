// A prepared dataset of conversations (`prepare --chat`): the same ids, starts
// and mask as the conversations encoded in memory, with a char vocabulary and a
// Hugging Face tokenizer; a damaged mask or starts file is refused by name.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "tinygpt/datasets/conversation_data.h"
#include "tinygpt/datasets/conversation_dataset.h"
#include "tinygpt/datasets/training_data.h"
#include "tinygpt/tensor/error.h"
#include "tests/tokenizer/tokenizer_test_support.h"

using namespace tg;
using tokenizer::testing::ScratchDirectory;
using tokenizer::testing::write_file;
namespace fs = std::filesystem;

namespace {

std::string chats(int count) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text += "{\"messages\": [{\"role\": \"user\", \"content\": \"q" + std::to_string(i) + std::string(i % 5, '?') +
            "\"}, {\"role\": \"assistant\", \"content\": \"answer " + std::to_string(i * 7) + "\"}]}\n" +
            (i % 4 == 0 ? "\n" : "");
  return text;
}

void check_same_split(const ConversationSplit& prepared, const ConversationSplit& in_memory) {
  REQUIRE(prepared.size() == in_memory.size());
  REQUIRE(prepared.tokens() == in_memory.tokens());
  CHECK(prepared.token_split().ids(0, prepared.tokens()) == in_memory.token_split().ids(0, in_memory.tokens()));
  for (int64_t c = 0; c < prepared.size(); ++c) {
    CHECK(prepared.length(c) == in_memory.length(c));
    const auto a = prepared.trained(c), b = in_memory.trained(c);
    CHECK(std::vector<uint8_t>(a.begin(), a.end()) == std::vector<uint8_t>(b.begin(), b.end()));
  }
}

}  // namespace

TEST_CASE("prepare --chat: the ids, starts and mask of encoding the conversations in memory, char-level and HF") {
  ScratchDirectory scratch("prepare-chat");
  const fs::path source = scratch.path() / "chats.jsonl";
  write_file(source, chats(23));
  const TrainingData in_memory = conversation_data({source.string(), "", "train"}, nullptr);
  PrepareConversationsOptions options;
  options.source = source.string();
  options.out_directory = (scratch.path() / "char").string();
  const PrepareSummary summary = prepare_conversation_dataset(options);
  REQUIRE(summary.meta.conversations.has_value());
  CHECK(summary.meta.conversations->train.count == 21);  // 23 less the last 10% (2)
  CHECK(summary.meta.conversations->val.count == 2);
  const TrainingData prepared = prepared_data(options.out_directory);
  REQUIRE(prepared.conversations.has_value());
  CHECK(prepared.tokenizer.to_json() == in_memory.tokenizer.to_json());
  check_same_split(prepared.conversations->train, in_memory.conversations->train);
  check_same_split(prepared.conversations->val, in_memory.conversations->val);

  const tokenizer::TextTokenizer qwen = tokenizer::load_tokenizer_directory("tests/fixtures/hf_llama/qwen2");
  const TrainingData hf_memory = conversation_data({source.string(), "", "train"}, &qwen);
  options.tokenizer = DatasetTokenizer::hf;
  options.vocabulary_directory = "tests/fixtures/hf_llama/qwen2";
  options.out_directory = (scratch.path() / "hf").string();
  prepare_conversation_dataset(options);
  const TrainingData hf_prepared = prepared_data(options.out_directory);
  CHECK(hf_prepared.tokenizer.to_json() == qwen.to_json());  // fine-tuning the model accepts it
  check_same_split(hf_prepared.conversations->train, hf_memory.conversations->train);
  check_same_split(hf_prepared.conversations->val, hf_memory.conversations->val);
}

TEST_CASE("prepare --chat: a damaged mask or starts file, and a file of one conversation, are refused by name") {
  ScratchDirectory scratch("prepare-chat-errors");
  const fs::path source = scratch.path() / "chats.jsonl";
  write_file(source, chats(10));
  PrepareConversationsOptions options;
  options.source = source.string();
  options.out_directory = (scratch.path() / "data").string();
  prepare_conversation_dataset(options);
  const fs::path mask = scratch.path() / "data" / kTrainMaskFile;
  std::string bytes = tokenizer::testing::read_file(mask);
  bytes[3] = static_cast<char>(bytes[3] ^ 1);
  write_file(mask, bytes);
  CHECK_THROWS_WITH_AS(prepared_data(options.out_directory), doctest::Contains("train.mask' is damaged: its XXH3 hash is"), Error);
  write_file(mask, bytes.substr(1));
  CHECK_THROWS_WITH_AS(prepared_data(options.out_directory), doctest::Contains("train.mask' has "), Error);
  fs::remove(scratch.path() / "data" / kValStartsFile);
  prepare_conversation_dataset(options);  // whole again
  fs::remove(scratch.path() / "data" / kValStartsFile);
  CHECK_THROWS_WITH_AS(prepared_data(options.out_directory), doctest::Contains("val.starts' is missing"), Error);

  write_file(source, chats(1));
  const std::string message = "prepare: --chat " + source.string() + ": holds 1 conversation; at least 2";
  CHECK_THROWS_WITH_AS(prepare_conversation_dataset(options), doctest::Contains(message.c_str()), Error);
}
