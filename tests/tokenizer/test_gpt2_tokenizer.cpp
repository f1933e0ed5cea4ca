// GPT-2's tokenizer end to end: known answers, tiny Shakespeare, special
// tokens, round trips of arbitrary bytes, long pieces, and decode errors.
#include <doctest/doctest.h>

#include <random>

#include "tests/tokenizer/tokenizer_test_support.h"
#include "tinygpt/tokenizer/bpe_merge.h"
#include "tinygpt/tokenizer/errors.h"

using namespace tg::tokenizer;
using tg::tokenizer::testing::gpt2;
using Ids = std::vector<TokenId>;

TEST_CASE("known answers from tiktoken") {
  GPT2_OR_SKIP();
  CHECK(gpt2().vocab_size() == 50257);
  CHECK(gpt2().encode("Hello world") == Ids{15496, 995});
  CHECK(gpt2().encode("Every effort moves you") == Ids{6109, 3626, 6100, 345});
  CHECK(gpt2().encode("Every day holds a") == Ids{6109, 1110, 6622, 257});
  CHECK(gpt2().encode("Hello, I am") == Ids{15496, 11, 314, 716});
  CHECK(gpt2().encode("").empty());
  CHECK(gpt2().token_text(995) == "\xC4\xA0world");  // Ġworld
}

TEST_CASE("the whole of tiny Shakespeare encodes to 338,025 tokens and back") {
  GPT2_OR_SKIP();
  const std::string text = testing::read_file(testing::shakespeare_path);
  REQUIRE(text.size() == 1115394);
  const Ids ids = gpt2().encode(text);
  CHECK(ids.size() == 338025);
  CHECK(gpt2().decode(ids) == text);
}

TEST_CASE("<|endoftext|> is text by default and id 50256 only when asked") {
  GPT2_OR_SKIP();
  CHECK(gpt2().special_token("<|endoftext|>") == std::optional<TokenId>(50256));
  CHECK_FALSE(gpt2().special_token("<|startoftext|>").has_value());
  CHECK(gpt2().encode("<|endoftext|>") == Ids{27, 91, 437, 1659, 5239, 91, 29});
  CHECK(gpt2().encode("<|endoftext|>", SpecialTokens::recognised) == Ids{50256});
  CHECK(gpt2().encode("a<|endoftext|>b<|endoftext|>", SpecialTokens::recognised) == Ids{64, 50256, 65, 50256});
  CHECK(gpt2().encode("<|endoftext", SpecialTokens::recognised) == gpt2().encode("<|endoftext"));
  CHECK(gpt2().decode(Ids{50256}) == "<|endoftext|>");
  CHECK(gpt2().token_text(50256) == "<|endoftext|>");
}

TEST_CASE("any byte string survives encode then decode, valid UTF-8 or not") {
  GPT2_OR_SKIP();
  std::mt19937 random(2024);
  for (int round = 0; round < 200; ++round) {
    std::string bytes(random() % 64, '\0');
    for (char& byte : bytes) byte = static_cast<char>(random() % 256);
    CHECK(gpt2().decode(gpt2().encode(bytes)) == bytes);
  }
  const std::string invalid = "ok \xFF\xFE broken \xC3 utf8 \xED\xA0\x80 end";
  const Ids ids = gpt2().encode(invalid);
  CHECK(gpt2().decode(ids) == invalid);
}

TEST_CASE("long pieces: 200 KB of one letter and random bytes complete correctly") {
  GPT2_OR_SKIP();
  const std::string letters(200 * 1024, 'a');
  const Ids ids = gpt2().encode(letters);
  CHECK(gpt2().decode(ids) == letters);
  // tiktoken gives 51,200 copies of "aaaa" (id 24794): GPT-2 has no longer
  // run of a's that "aaaa" + "aaaa" would form.
  CHECK(ids.size() == letters.size() / 4);
  CHECK(ids.front() == 24794);
  CHECK(ids.front() == ids.back());

  std::mt19937 random(5);
  std::string noise(200 * 1024, '\0');
  for (char& byte : noise) byte = static_cast<char>(random() % 256);
  CHECK(gpt2().decode(gpt2().encode(noise)) == noise);
}

TEST_CASE("merge_by_heap and merge_by_scan agree on every piece") {
  GPT2_OR_SKIP();
  const BpeVocabulary& vocabulary = gpt2().vocabulary();
  std::mt19937 random(11);
  const std::string alphabet = "aaabbeeeiinnorsttt  \xC3\xA9\xE4\xB8\xAD!.";
  for (int round = 0; round < 300; ++round) {
    std::string piece(1 + random() % 300, ' ');
    for (char& byte : piece) byte = alphabet[random() % alphabet.size()];
    Ids by_scan, by_heap;
    merge_by_scan(vocabulary, piece, by_scan);
    merge_by_heap(vocabulary, piece, by_heap);
    REQUIRE(by_scan == by_heap);
  }
}

TEST_CASE("decode names the first id outside the vocabulary and its position") {
  GPT2_OR_SKIP();
  CHECK_THROWS_WITH_AS(gpt2().decode(Ids{15496, 50257, 995}),
                       "cannot decode id 50257 at position 1: the vocabulary has ids 0..50256", DecodeError);
  CHECK_THROWS_AS(gpt2().token_text(99999), DecodeError);
}

TEST_CASE("a saved vocabulary is byte for byte GPT-2's files") {
  GPT2_OR_SKIP();
  testing::ScratchDirectory scratch("gpt2-save");
  gpt2().save(scratch.path());
  CHECK(testing::read_file(scratch.path() / "vocab.bpe") == testing::read_file(testing::gpt2_directory / "vocab.bpe"));
  CHECK(testing::read_file(scratch.path() / "encoder.json") ==
        testing::read_file(testing::gpt2_directory / "encoder.json"));
}
