// Prepared datasets: `prepare` streams text into token files whose ids are
// those of encoding the text whole, split where split_by_position splits, and
// opening one refuses every kind of damaged or foreign dataset by name.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "tinygpt/datasets/data.h"
#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/datasets/prepare_tokens.h"
#include "tinygpt/datasets/token_dataset.h"
#include "tinygpt/tensor/error.h"
#include "tests/tokenizer/tokenizer_test_support.h"
#include "tinygpt/tokenizer/bpe_trainer.h"
#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/utf8.h"

using namespace tg;
using tokenizer::testing::adversarial_text;
using tokenizer::testing::read_file;
using tokenizer::testing::ScratchDirectory;
using tokenizer::testing::write_file;
namespace fs = std::filesystem;

namespace {

std::vector<int64_t> all_ids(const TokenFile& file) {
  std::vector<int64_t> ids(static_cast<std::size_t>(file.size()));
  file.copy_window(0, file.size(), ids.data());
  return ids;
}

std::vector<int64_t> widened(const std::vector<tokenizer::TokenId>& ids) {
  return std::vector<int64_t>(ids.begin(), ids.end());
}

// The two splits of a dataset are the ids split_by_position makes of `ids`.
void check_splits(const PreparedDataset& dataset, const std::vector<int64_t>& ids, double val_fraction = 0.1) {
  const TokenSplits expected = split_by_position(ids, 1.0 - val_fraction);
  CHECK(dataset.meta.train.tokens == expected.train.size());
  CHECK(dataset.meta.val.tokens == expected.val.size());
  CHECK(all_ids(dataset.train) == expected.train.ids(0, expected.train.size()));
  CHECK(all_ids(dataset.val) == expected.val.ids(0, expected.val.size()));
}

PrepareOptions options_for(std::vector<std::string> sources, const fs::path& out, std::size_t piece_bytes) {
  PrepareOptions options;
  options.sources = std::move(sources);
  options.out_directory = out.string();
  options.piece_bytes = piece_bytes;
  return options;
}

// A small char-level dataset to damage: 1,720 tokens (1,548 train, 172 val) of 17 characters.
struct SmallDataset {
  ScratchDirectory scratch{"token-dataset"};
  fs::path dir = scratch.path() / "dataset";
  fs::path meta = dir / "meta.json";
  fs::path train = dir / "train.bin";
  fs::path val = dir / "val.bin";

  SmallDataset() {
    std::string text;
    for (int repeat = 0; repeat < 40; ++repeat) text += "To be, or not to be, that is the question:\n";
    write_file(scratch.path() / "hamlet.txt", text);
    prepare_token_dataset(options_for({(scratch.path() / "hamlet.txt").string()}, dir, 100));
  }

  nlohmann::json meta_json() const { return nlohmann::json::parse(read_file(meta)); }
  void write_meta(const nlohmann::json& json) const { write_file(meta, json.dump()); }
  void resize(const fs::path& file, int64_t change) const {
    fs::resize_file(file, static_cast<uintmax_t>(static_cast<int64_t>(fs::file_size(file)) + change));
  }
};

// doctest's Contains, from a std::string.
doctest::Contains contains(const std::string& text) { return doctest::Contains(text.c_str()); }

#define CHECK_OPEN_FAILS(dataset_dir, expected) \
  CHECK_THROWS_WITH_AS(open_prepared_dataset((dataset_dir).string()), contains(expected), tg::Error)

}  // namespace

TEST_CASE("char-level prepare of tiny Shakespeare holds the ids train --data uses, split by position") {
  if (!fs::exists(tokenizer::testing::shakespeare_path)) {
    MESSAGE("skipped: tiny Shakespeare not found in ../shared/data");
    return;
  }
  ScratchDirectory scratch("prepare-char");
  const PrepareSummary summary =
      prepare_token_dataset(options_for({tokenizer::testing::shakespeare_path.string()}, scratch.path(), 4096));
  const std::string text = read_file(tokenizer::testing::shakespeare_path);
  // What train does with a text file: a vocabulary of its characters, then every character's id.
  const tokenizer::CharTokenizer characters = tokenizer::CharTokenizer::from_corpus(text);

  const PreparedDataset dataset = open_prepared_dataset(scratch.path().string());
  CHECK(dataset.meta.vocab_size == 65);
  CHECK(dataset.meta.dtype == TokenDType::uint16);
  CHECK(dataset.meta.tokenizer.type == "char");
  REQUIRE(dataset.tokenizer.as_char() != nullptr);
  CHECK(dataset.tokenizer.as_char()->characters() == characters.characters());
  check_splits(dataset, widened(characters.encode(text)));
  CHECK(dataset.meta.train.tokens == 1003854);
  CHECK(summary.source_bytes == 1115394);
  CHECK(summary.meta.to_json() == dataset.meta.to_json());
  CHECK(fs::file_size(scratch.path() / "train.bin") == 2 * 1003854);
}

TEST_CASE("several files: char-level concatenates them, BPE puts <|endoftext|> between them") {
  ScratchDirectory scratch("prepare-documents");
  const std::string first = "the first document\nends here.", second = "and the second\n\nbegins: 42 times";
  write_file(scratch.path() / "first.txt", first);
  write_file(scratch.path() / "second.txt", second);
  const std::vector<std::string> sources = {(scratch.path() / "first.txt").string(),
                                            (scratch.path() / "second.txt").string()};

  SUBCASE("char-level") {
    prepare_token_dataset(options_for(sources, scratch.path() / "char", 3));
    const auto characters = tokenizer::CharTokenizer::from_corpus(first + second);
    check_splits(open_prepared_dataset((scratch.path() / "char").string()), widened(characters.encode(first + second)));
  }
  SUBCASE("a BPE vocabulary from bpe-train") {
    const tokenizer::BpeVocabulary vocabulary = tokenizer::train_bpe(first + second, {.vocab_size = 300});
    tokenizer::write_gpt2_vocabulary(vocabulary, scratch.path() / "bpe");
    PrepareOptions options = options_for(sources, scratch.path() / "dataset", 5);
    options.tokenizer = DatasetTokenizer::bpe;
    options.vocabulary_directory = (scratch.path() / "bpe").string();
    prepare_token_dataset(options);

    const PreparedDataset dataset = open_prepared_dataset((scratch.path() / "dataset").string());
    const tokenizer::Gpt2Tokenizer bpe(vocabulary);
    std::vector<int64_t> expected = widened(bpe.encode(first));
    expected.push_back(*bpe.special_token("<|endoftext|>"));
    for (const auto id : bpe.encode(second)) expected.push_back(id);
    CHECK(dataset.meta.tokenizer.type == "bpe");
    CHECK(dataset.meta.vocab_size == static_cast<int64_t>(vocabulary.size()));
    check_splits(dataset, expected);
    // The dataset carries its own copy of the vocabulary.
    CHECK(read_file(scratch.path() / "dataset" / "encoder.json") == read_file(scratch.path() / "bpe" / "encoder.json"));
    CHECK(read_file(scratch.path() / "dataset" / "vocab.bpe") == read_file(scratch.path() / "bpe" / "vocab.bpe"));
    CHECK(dataset.tokenizer.decode(all_ids(dataset.train)).starts_with(first));
  }
}

TEST_CASE("GPT-2: text streamed in small pieces gives the ids of the whole, adversarial text included") {
  GPT2_OR_SKIP();
  ScratchDirectory scratch("prepare-gpt2");
  const std::string adversarial = adversarial_text(2000, 3);
  std::string shakespeare = read_file(tokenizer::testing::shakespeare_path).substr(0, 50000);
  write_file(scratch.path() / "adversarial.txt", adversarial);
  write_file(scratch.path() / "shakespeare.txt", shakespeare);
  PrepareOptions options = options_for(
      {(scratch.path() / "adversarial.txt").string(), (scratch.path() / "shakespeare.txt").string()},
      scratch.path() / "dataset", 17);
  options.tokenizer = DatasetTokenizer::gpt2;
  options.vocabulary_directory = tokenizer::testing::gpt2_directory.string();
  options.val_fraction = 0.25;
  prepare_token_dataset(options);

  // The "<|endoftext|>" inside the adversarial text is its token, as the separator is.
  REQUIRE(adversarial.find("<|endoftext|>") != std::string::npos);
  std::vector<int64_t> expected =
      widened(tokenizer::testing::gpt2().encode(adversarial, tokenizer::SpecialTokens::recognised));
  expected.push_back(50256);
  for (const auto id : tokenizer::testing::gpt2().encode(shakespeare)) expected.push_back(id);
  const PreparedDataset dataset = open_prepared_dataset((scratch.path() / "dataset").string());
  CHECK(dataset.meta.tokenizer.type == "gpt2");
  CHECK(dataset.meta.vocab_size == 50257);
  CHECK(dataset.meta.dtype == TokenDType::uint16);
  check_splits(dataset, expected, 0.25);
}

TEST_CASE("a vocabulary of more than 65,535 ids is stored as uint32") {
  ScratchDirectory scratch("prepare-uint32");
  // 70,000 distinct characters, each a token; the last ids need more than 16 bits.
  std::string text;
  std::size_t first_5000_bytes = 0;
  for (char32_t c = 0x100, count = 0; count < 70000; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;  // surrogates are no characters
    tokenizer::append_utf8(text, c);
    if (++count == 5000) first_5000_bytes = text.size();
  }
  text += text.substr(0, first_5000_bytes);  // 75,000 tokens: the train split reaches ids beyond 65,535
  write_file(scratch.path() / "many.txt", text);
  prepare_token_dataset(options_for({(scratch.path() / "many.txt").string()}, scratch.path() / "dataset", 1000));

  const PreparedDataset dataset = open_prepared_dataset((scratch.path() / "dataset").string());
  CHECK(dataset.meta.vocab_size == 70000);
  CHECK(dataset.meta.dtype == TokenDType::uint32);
  CHECK(fs::file_size(scratch.path() / "dataset" / "train.bin") == 4 * static_cast<uintmax_t>(dataset.train.size()));
  const auto characters = tokenizer::CharTokenizer::from_corpus(text);
  check_splits(dataset, widened(characters.encode(text)));
  REQUIRE(dataset.train.size() == 67500);
  CHECK(all_ids(dataset.train)[67000] == 67000);
}

TEST_CASE("the dtype: uint16 for vocabularies of up to 65,535 ids") {
  CHECK(token_dtype_for_vocab_size(50257) == TokenDType::uint16);
  CHECK(token_dtype_for_vocab_size(65535) == TokenDType::uint16);
  CHECK(token_dtype_for_vocab_size(65536) == TokenDType::uint32);
  CHECK(token_dtype_for_vocab_size(65537) == TokenDType::uint32);
}

TEST_CASE("a token file widens ids to int64 and refuses one outside the vocabulary by file and position") {
  ScratchDirectory scratch("token-file");
  const std::vector<uint32_t> stored = {0, 65535, 65536, 99999, 100000};
  write_file(scratch.path() / "ids.bin",
             std::string_view(reinterpret_cast<const char*>(stored.data()), stored.size() * sizeof(uint32_t)));
  const TokenFile file((scratch.path() / "ids.bin").string(), TokenDType::uint32, 100000);
  CHECK(file.size() == 5);
  std::vector<int64_t> window(4);
  file.copy_window(0, 4, window.data());
  CHECK(window == std::vector<int64_t>{0, 65535, 65536, 99999});
  CHECK_THROWS_WITH_AS(file.copy_window(2, 3, window.data()),
                       doctest::Contains("id 100000 at token position 4 is outside the vocabulary of 100000 ids"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(file.copy_window(3, 3, window.data()), doctest::Contains("does not lie inside its 5 tokens"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(file.copy_window(-1, 1, window.data()), doctest::Contains("does not lie inside"), tg::Error);

  // The same bytes read as uint16 are 10 ids.
  const TokenFile narrow((scratch.path() / "ids.bin").string(), TokenDType::uint16, 1 << 16);
  CHECK(narrow.size() == 10);
}

TEST_CASE("a token file cut shorter under an open run is an error naming it, not SIGBUS") {
  // Another program writing over train.bin (or a log sent there) shrank it under a mapped run, which
  // then died of SIGBUS at its next window with no message.
  ScratchDirectory scratch("token-file-shrinks");
  const std::vector<uint16_t> stored(4096, 7);
  const fs::path path = scratch.path() / "train.bin";
  write_file(path, std::string_view(reinterpret_cast<const char*>(stored.data()), stored.size() * sizeof(uint16_t)));
  const TokenFile file(path.string(), TokenDType::uint16, 65);
  std::vector<int64_t> window(64);
  file.copy_window(4000, 64, window.data());
  CHECK(window == std::vector<int64_t>(64, 7));
  fs::resize_file(path, 100);
  CHECK_THROWS_WITH_AS(file.copy_window(4000, 64, window.data()),
                       doctest::Contains("is shorter than when it was opened (4096 tokens)"), tg::Error);
  file.copy_window(0, 50, window.data());  // what is still there reads as before
  CHECK(window[49] == 7);
}

TEST_CASE("opening refuses a directory that is not a dataset") {
  ScratchDirectory scratch("not-a-dataset");
  CHECK_OPEN_FAILS(scratch.path(), "is not a prepared dataset: it has no meta.json (run tinygpt prepare");
  CHECK_OPEN_FAILS(scratch.path() / "missing", "is not a prepared dataset: no such directory");
}

TEST_CASE("opening refuses token files that disagree with meta.json, naming the file and both figures") {
  SmallDataset dataset;
  const std::string train = dataset.train.string();
  SUBCASE("a truncated file") {
    dataset.resize(dataset.train, -2);
    CHECK_OPEN_FAILS(dataset.dir, "token file '" + train + "' holds 1547 tokens (3094 bytes of uint16) but "
                                  "meta.json says 1548 (3096 bytes)");
  }
  SUBCASE("a byte size that is no whole number of ids") {
    dataset.resize(dataset.val, 1);
    CHECK_OPEN_FAILS(dataset.dir, "has 345 bytes, not a whole number of uint16 ids (2 bytes each)");
  }
  SUBCASE("a missing file") {
    fs::remove(dataset.val);
    CHECK_OPEN_FAILS(dataset.dir, "cannot open token file '" + dataset.val.string() + "'");
  }
  SUBCASE("a token count that is not the file's") {
    nlohmann::json meta = dataset.meta_json();
    meta["val"]["tokens"] = 173;
    dataset.write_meta(meta);
    CHECK_OPEN_FAILS(dataset.dir, "holds 172 tokens (344 bytes of uint16) but meta.json says 173 (346 bytes)");
  }
  SUBCASE("a vocabulary size that is not the tokenizer's") {
    nlohmann::json meta = dataset.meta_json();
    meta["vocab_size"] = 30;
    dataset.write_meta(meta);
    CHECK_OPEN_FAILS(dataset.dir, "\"tokenizer.characters\" and its special tokens make 17 tokens but \"vocab_size\" is 30");
  }
  SUBCASE("a damaged file of the right size: its hash") {
    std::string bytes = read_file(dataset.val);
    bytes[100] ^= 1;
    write_file(dataset.val, bytes);
    CHECK_OPEN_FAILS(dataset.dir, "token file '" + dataset.val.string() + "' is damaged: its XXH3 hash is ");
    // Without the hash check it opens; the ids are still all inside the vocabulary.
    CHECK(open_prepared_dataset(dataset.dir.string(), HashCheck::skip).val.size() == 172);
  }
  SUBCASE("an id outside the vocabulary") {
    std::string bytes = read_file(dataset.train);
    bytes[20] = 17;  // the vocabulary has ids 0..16
    bytes[21] = 0;
    write_file(dataset.train, bytes);
    const PreparedDataset opened = open_prepared_dataset(dataset.dir.string(), HashCheck::skip);
    std::vector<int64_t> window(20);
    CHECK_THROWS_WITH_AS(opened.train.copy_window(0, 20, window.data()),
                         contains("token file '" + train + "': id 17 at token position 10 is outside the "
                                           "vocabulary of 17 ids (0..16)"),
                         tg::Error);
  }
}

TEST_CASE("opening refuses a malformed meta.json, naming the field") {
  SmallDataset dataset;
  const nlohmann::json original = dataset.meta_json();
  const auto fails_with = [&](const char* expected, auto edit) {
    nlohmann::json meta = original;
    edit(meta);
    dataset.write_meta(meta);
    CAPTURE(expected);
    CHECK_OPEN_FAILS(dataset.dir, expected);
  };
  fails_with("unknown format \"tinygpt-tokens-v9\" (this tinygpt reads \"tinygpt-tokens-v1\")",
             [](auto& meta) { meta["format"] = "tinygpt-tokens-v9"; });
  fails_with("\"format\" is missing", [](auto& meta) { meta.erase("format"); });
  fails_with("\"dtype\" is \"int8\"; expected \"uint16\" or \"uint32\"", [](auto& meta) { meta["dtype"] = "int8"; });
  fails_with("\"vocab_size\" must be an integer from 1 to 4294967295, got 17.0",
             [](auto& meta) { meta["vocab_size"] = 17.0; });
  fails_with("\"vocab_size\" must be an integer from 1 to 4294967295, got \"17\"",
             [](auto& meta) { meta["vocab_size"] = "17"; });
  fails_with("\"vocab_size\" must be an integer from 1 to 4294967295, got 0", [](auto& meta) { meta["vocab_size"] = 0; });
  fails_with("\"vocab_size\" 70000 has ids up to 69999, which do not fit \"dtype\" uint16",
             [](auto& meta) { meta["vocab_size"] = 70000; });
  fails_with("\"train.tokens\" must be an integer from 0 to", [](auto& meta) { meta["train"]["tokens"] = -1; });
  fails_with("\"train.tokens\" must be an integer from 0 to",
             [](auto& meta) { meta["train"]["tokens"] = 18446744073709551615ull; });
  fails_with("\"val.file\" must name a file in the dataset's directory, got \"../val.bin\"",
             [](auto& meta) { meta["val"]["file"] = "../val.bin"; });
  fails_with("\"train.xxh3\" must be 16 lower-case hex digits, got \"xyz\"",
             [](auto& meta) { meta["train"]["xxh3"] = "xyz"; });
  fails_with("\"val\" is missing", [](auto& meta) { meta.erase("val"); });
  fails_with("\"train\" must be a JSON object, got array", [](auto& meta) { meta["train"] = nlohmann::json::array(); });
  fails_with("\"tokenizer.type\" is \"word\"; expected \"char\", \"gpt2\", \"bpe\" or \"hf\"",
             [](auto& meta) { meta["tokenizer"]["type"] = "word"; });
  fails_with("\"tokenizer.characters\": the serialized vocabulary is not sorted",
             [](auto& meta) { meta["tokenizer"]["characters"] = "ba"; });
  fails_with("\"tokenizer.encoder\" is missing", [](auto& meta) { meta["tokenizer"]["type"] = "gpt2"; });
  fails_with("\"sources[0].bytes\" must be an integer from 0 to",
             [](auto& meta) { meta["sources"][0]["bytes"] = "many"; });

  write_file(dataset.meta, "{\"format\": \"tinygpt-tokens-v1\", \"train\": ");
  CHECK_OPEN_FAILS(dataset.dir, "meta.json': not valid JSON (truncated?)");
  write_file(dataset.meta, std::string(100, '[') + std::string(100, ']'));
  CHECK_OPEN_FAILS(dataset.dir, "the JSON nests deeper than 64 levels");
}

TEST_CASE("prepare refuses missing sources, directories and text a char vocabulary cannot hold") {
  ScratchDirectory scratch("prepare-errors");
  const fs::path missing = scratch.path() / "missing.txt";
  CHECK_THROWS_WITH_AS(prepare_token_dataset(options_for({missing.string()}, scratch.path() / "out", 100)),
                       contains("cannot read '" + missing.string() + "'"), tg::Error);
  CHECK_THROWS_WITH_AS(prepare_token_dataset(options_for({scratch.path().string()}, scratch.path() / "out", 100)),
                       doctest::Contains("is a directory; give a text file"), tg::Error);
  write_file(scratch.path() / "bad.txt", std::string(300, 'a') + "\xFF" + "b");
  CHECK_THROWS_WITH_AS(
      prepare_token_dataset(options_for({(scratch.path() / "bad.txt").string()}, scratch.path() / "out", 100)),
      doctest::Contains("bad.txt', in the part from byte 300: the corpus is not valid UTF-8: byte 0xFF at byte offset 0"),
      tg::Error);
  // Nothing that looks like a dataset was left behind.
  CHECK_FALSE(fs::exists(scratch.path() / "out" / "meta.json"));
}

TEST_CASE("prepare over an old dataset replaces it whole and leaves no temporary files") {
  SmallDataset dataset;
  // A prepare that fails partway leaves the old dataset as it was.
  write_file(dataset.scratch.path() / "broken.txt", "fine text, then \xFF");
  CHECK_THROWS_AS(
      prepare_token_dataset(options_for({(dataset.scratch.path() / "broken.txt").string()}, dataset.dir, 100)),
      tg::Error);
  CHECK(open_prepared_dataset(dataset.dir.string()).meta.train.tokens == 1548);

  write_file(dataset.scratch.path() / "other.txt", "something else entirely\n");
  prepare_token_dataset(options_for({(dataset.scratch.path() / "other.txt").string()}, dataset.dir, 100));
  const PreparedDataset reopened = open_prepared_dataset(dataset.dir.string());
  CHECK(reopened.meta.train.tokens + reopened.meta.val.tokens == 24);
  for (const auto& entry : fs::directory_iterator(dataset.dir)) {
    CAPTURE(entry.path());
    CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
  }
}

TEST_CASE("xxh3 hex round-trips and refuses anything but 16 lower-case hex digits") {
  CHECK(xxh3_hex(0x0123456789abcdefull) == "0123456789abcdef");
  CHECK(xxh3_hex(1) == "0000000000000001");
  CHECK(parse_xxh3_hex("0123456789abcdef") == 0x0123456789abcdefull);
  CHECK_FALSE(parse_xxh3_hex("0123456789ABCDEF").has_value());
  CHECK_FALSE(parse_xxh3_hex("123").has_value());
}
