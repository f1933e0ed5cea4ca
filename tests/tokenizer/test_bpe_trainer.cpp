// BPE training: hand-checkable merges on a toy corpus, determinism, saving in
// GPT-2's format and loading back, round trips, and bad options.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "tests/tokenizer/tokenizer_test_support.h"
#include "tinygpt/tokenizer/bpe_trainer.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/gpt2_pretokenizer.h"

using namespace tg::tokenizer;

namespace {

std::string merge_text(const BpeVocabulary& vocabulary, const Merge& merge) {
  return std::string(vocabulary.token_bytes(merge.left)) + "+" + std::string(vocabulary.token_bytes(merge.right));
}

// BPE training as its definition reads, with none of the trainer's bookkeeping:
// count every pair in every word, merge the best one left to right in every
// word, start again. Returns the merges that made new tokens, as "left+right".
std::vector<std::string> train_bpe_by_definition(std::string_view corpus, std::size_t merges, std::uint64_t min_count) {
  std::map<std::string, std::uint64_t> word_counts;
  Gpt2PieceScanner scanner(corpus);
  for (std::string_view piece = scanner.next(); !piece.empty(); piece = scanner.next()) ++word_counts[std::string(piece)];
  std::vector<std::pair<std::vector<std::string>, std::uint64_t>> words;
  for (const auto& [word, count] : word_counts) {
    std::vector<std::string> tokens;
    for (char byte : word) tokens.emplace_back(1, byte);
    words.push_back({tokens, count});
  }
  std::set<std::string> tokens;
  for (int byte = 0; byte < 256; ++byte) tokens.insert(std::string(1, static_cast<char>(byte)));
  std::vector<std::string> made;
  while (made.size() < merges) {
    std::map<std::pair<std::string, std::string>, std::uint64_t> pair_counts;  // ordered by bytes
    for (const auto& [word, count] : words)
      for (std::size_t i = 0; i + 1 < word.size(); ++i) pair_counts[{word[i], word[i + 1]}] += count;
    const auto best = std::max_element(pair_counts.begin(), pair_counts.end(), [](const auto& a, const auto& b) {
      return a.second < b.second || (a.second == b.second && a.first > b.first);
    });
    if (best == pair_counts.end() || best->second < min_count) break;
    const auto [left, right] = best->first;
    for (auto& [word, count] : words) {
      std::vector<std::string> merged;
      for (std::size_t i = 0; i < word.size(); ++i) {
        const bool here = i + 1 < word.size() && word[i] == left && word[i + 1] == right;
        merged.push_back(here ? left + right : word[i]);
        if (here) ++i;
      }
      word = merged;
    }
    if (tokens.insert(left + right).second) made.push_back(left + "+" + right);
  }
  return made;
}

}  // namespace

TEST_CASE("the most frequent pair merges first, ties broken by bytes") {
  // Pieces: "aaab" x1, " aaab" x2, " cd" x2. Pair counts: a+a 6, a+b 3,
  // " "+a 2, " "+c 2, c+d 2, so a+a merges first, left to right: "aaab" is
  // now aa a b. Then aa+a and a+b both count 3; "a" sorts before "aa", so a+b
  // wins, and aa+ab (3) follows.
  const BpeVocabulary vocabulary = train_bpe("aaab aaab aaab cd cd", {.vocab_size = 257 + 3, .min_pair_count = 2});
  REQUIRE(vocabulary.merges().size() == 3);
  CHECK(merge_text(vocabulary, vocabulary.merges()[0]) == "a+a");
  CHECK(merge_text(vocabulary, vocabulary.merges()[1]) == "a+b");
  CHECK(merge_text(vocabulary, vocabulary.merges()[2]) == "aa+ab");
  CHECK(vocabulary.size() == 260);
  CHECK(vocabulary.token_bytes(259) == "<|endoftext|>");
  CHECK(vocabulary.special_ids() == std::vector<TokenId>{259});
}

TEST_CASE("equal counts merge in byte order of the pair") {
  // " "+x, x+y, " "+p, p+q all occur twice; " " (0x20) sorts first, then by the
  // right byte: " "+p before " "+x.
  const BpeVocabulary vocabulary = train_bpe("xy xy pq pq", {.vocab_size = 258, .min_pair_count = 2});
  REQUIRE(vocabulary.merges().size() == 1);
  CHECK(merge_text(vocabulary, vocabulary.merges()[0]) == " +p");
}

TEST_CASE("training stops when no pair is frequent enough") {
  const BpeVocabulary vocabulary = train_bpe("abcdef", {.vocab_size = 1000, .min_pair_count = 2});
  CHECK(vocabulary.merges().empty());
  CHECK(vocabulary.size() == 257);
}

TEST_CASE("bad options are errors") {
  CHECK_THROWS_WITH_AS(train_bpe("abc", {.vocab_size = 256}),
                       "a byte-level BPE vocabulary needs at least 257 tokens (256 bytes and <|endoftext|>), got 256",
                       TokenizerError);
  CHECK_THROWS_AS(train_bpe("abc", {.vocab_size = 300, .min_pair_count = 0}), TokenizerError);
}

TEST_CASE("a tokenizer trained on tiny Shakespeare saves, loads like GPT-2's, and round-trips") {
  if (!std::filesystem::exists(testing::shakespeare_path)) {
    MESSAGE("skipped: ../shared/data/tinyshakespeare.txt not found");
    return;
  }
  const std::string text = testing::read_file(testing::shakespeare_path);
  const BpeVocabulary trained = train_bpe(text, {.vocab_size = 257 + 300});
  CHECK(trained.merges().size() == 300);
  CHECK(trained.size() == 557);

  testing::ScratchDirectory scratch("bpe-train");
  write_gpt2_vocabulary(trained, scratch.path());
  const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::load(scratch.path());
  CHECK(tokenizer.vocab_size() == 557);
  CHECK(tokenizer.special_token("<|endoftext|>") == std::optional<TokenId>(556));

  const std::vector<TokenId> ids = tokenizer.encode(text);
  CHECK(tokenizer.decode(ids) == text);
  // 300 merges should compress English well below one token per byte.
  CHECK(ids.size() < text.size() / 2);
  const std::string strange = "\xFF\x80 caf\xC3\xA9 \xF0\x9F\x91\x8D <|endoftext|>";
  CHECK(tokenizer.decode(tokenizer.encode(strange)) == strange);

  // Saving what was loaded gives the same files again, and training again
  // gives the same vocabulary: the result is deterministic.
  testing::ScratchDirectory again("bpe-train-again");
  write_gpt2_vocabulary(train_bpe(text, {.vocab_size = 257 + 300}), again.path());
  tokenizer.save(scratch.path() / "resaved");
  for (const char* name : {"encoder.json", "vocab.bpe"}) {
    const std::string original = testing::read_file(scratch.path() / name);
    CHECK(testing::read_file(again.path() / name) == original);
    CHECK(testing::read_file(scratch.path() / "resaved" / name) == original);
  }
}

TEST_CASE("training makes the merges the definition makes, on corpora full of repeats and overlaps") {
  std::mt19937 random(11);
  for (const std::string alphabet : {"a", "ab", "ab ", "abc \n", "aab b\xC3\xA9"}) {
    for (int corpus_index = 0; corpus_index < 4; ++corpus_index) {
      std::string corpus(200 + random() % 1800, ' ');
      for (char& byte : corpus) byte = alphabet[random() % alphabet.size()];
      CAPTURE(corpus);
      const BpeVocabulary trained = train_bpe(corpus, {.vocab_size = 257 + 40});
      std::vector<std::string> made;
      for (const Merge& merge : trained.merges()) made.push_back(merge_text(trained, merge));
      CHECK(made == train_bpe_by_definition(corpus, 40, 2));
    }
  }
}

TEST_CASE("a long piece of one letter trains without trouble") {
  const std::string corpus(20000, 'z');
  const BpeVocabulary vocabulary = train_bpe(corpus, {.vocab_size = 257 + 10});
  // z+z, zz+zz, zzzz+zzzz, ... then the leftovers of the halvings.
  CHECK(merge_text(vocabulary, vocabulary.merges()[0]) == "z+z");
  CHECK(merge_text(vocabulary, vocabulary.merges()[1]) == "zz+zz");
  const Gpt2Tokenizer tokenizer{BpeVocabulary(vocabulary)};
  CHECK(tokenizer.decode(tokenizer.encode(corpus)) == corpus);
}
