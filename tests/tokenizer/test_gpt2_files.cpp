// Reading encoder.json + vocab.bpe: every malformed, truncated or inconsistent
// file is a TokenizerFileError that names the file and, where it can, the line.
// The files here are tiny hand-made vocabularies, written to a scratch folder.
#include <doctest/doctest.h>

#include "tests/tokenizer/tokenizer_test_support.h"
#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_files.h"

using namespace tg::tokenizer;
using testing::ScratchDirectory;
using testing::write_file;

namespace {

// encoder.json entries for the 256 bytes, in GPT-2's order: "\"!\": 0, ...".
std::string byte_entries() {
  std::string entries;
  for (int id = 0; id < 256; ++id) {
    std::string text = bytes_to_alphabet_text(std::string(1, static_cast<char>(byte_order()[id])));
    if (text == "\"" || text == "\\") text = "\\" + text;
    entries += "\"" + text + "\": " + std::to_string(id) + ", ";
  }
  return entries;
}

// An encoder.json of the 256 bytes followed by `rest`, which closes the object.
// (Built by appending: GCC 12 warns falsely (-Wrestrict) on "{" + std::string.)
std::string encoder_with(const std::string& rest) {
  std::string encoder = "{";
  encoder += byte_entries();
  encoder += rest;
  return encoder;
}

// A valid vocabulary: the bytes, "he" (256), "the" (257), "<|endoftext|>" (258).
const std::string good_encoder = encoder_with("\"he\": 256, \"the\": 257, \"<|endoftext|>\": 258}");
const std::string good_merges = "#version: 0.2\nh e\nt he\n";

// Writes the two files and reads them back, returning the error message.
std::string read_error(const std::string& encoder, const std::string& merges) {
  ScratchDirectory scratch("gpt2-files");
  write_file(scratch.path() / "encoder.json", encoder);
  write_file(scratch.path() / "vocab.bpe", merges);
  try {
    read_gpt2_vocabulary(scratch.path());
  } catch (const TokenizerFileError& error) {
    return error.what();
  }
  return "no error";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a small well-formed vocabulary loads") {
  ScratchDirectory scratch("gpt2-files");
  write_file(scratch.path() / "encoder.json", good_encoder);
  write_file(scratch.path() / "vocab.bpe", good_merges);
  const BpeVocabulary vocabulary = read_gpt2_vocabulary(scratch.path());
  CHECK(vocabulary.size() == 259);
  CHECK(vocabulary.merges().size() == 2);
  CHECK(vocabulary.find("the") == 257);
  CHECK(vocabulary.merged(vocabulary.byte_token('t'), 256) == 257);
  CHECK(vocabulary.special_ids() == std::vector<TokenId>{258});
  CHECK(vocabulary.find("<|endoftext|>") == no_token);  // specials are not merge targets
}

TEST_CASE("missing files and directories are named") {
  CHECK_THROWS_AS(read_gpt2_vocabulary("/nonexistent/gpt2"), TokenizerFileError);
  ScratchDirectory scratch("gpt2-files");
  write_file(scratch.path() / "encoder.json", good_encoder);
  CHECK_THROWS_WITH(read_gpt2_vocabulary(scratch.path()),
                    doctest::Contains("vocab.bpe: cannot open the file"));
}

TEST_CASE("malformed or truncated encoder.json") {
  CHECK(contains(read_error(good_encoder.substr(0, good_encoder.size() / 2), good_merges),
                 "encoder.json: not valid JSON (truncated?)"));
  CHECK(contains(read_error("[1, 2]", good_merges), "expected a JSON object"));
  CHECK(contains(read_error(encoder_with("\"he\": \"256\", \"the\": 257}"), good_merges),
                 "token 'he' has id \"256\", expected an integer"));
  CHECK(contains(read_error(encoder_with("\"he\": 256, \"the\": 999}"), good_merges),
                 "token 'the' has id 999, but the 258 ids must be 0..257"));
  CHECK(contains(read_error(encoder_with("\"he\": 256, \"the\": 256}"), good_merges), "id 256 is used twice"));
  CHECK(contains(read_error(encoder_with("\"h e\": 256, \"the\": 257}"), good_merges),
                 "token 'h e' (id 256) has a character outside GPT-2's byte alphabet"));
}

TEST_CASE("malformed or truncated vocab.bpe") {
  CHECK(contains(read_error(good_encoder, "#version: 0.2\nh e\nt h"), "does not end with a newline"));
  CHECK(contains(read_error(good_encoder, "#version: 0.2\nh e\nthe\n"),
                 "vocab.bpe:3: expected two tokens separated by one space, got 'the'"));
  CHECK(contains(read_error(good_encoder, "#version: 0.2\nh  e\n"), "vocab.bpe:2: expected two tokens"));
  CHECK(contains(read_error(good_encoder, "#version: 0.2\nh e\nt hx\n"),
                 "vocab.bpe:3: 'hx' is not a token of the encoder file"));
  // A merges file cut after a whole line: "the" is never produced.
  CHECK(contains(read_error(good_encoder, "#version: 0.2\nh e\n"),
                 "token 'the' (id 257) is not produced by any merge (is the merges file truncated?)"));
  CHECK(contains(read_error(good_encoder, ""), "has no merges"));
}

TEST_CASE("merges that contradict the encoder name their line") {
  // "t"+"h" makes "th", which is not a token.
  CHECK(contains(read_error(good_encoder, "#version: 0.2\nh e\nt h\n"),
                 "vocab.bpe:3: merge 2 ('t' (id 83) + 'h' (id 71)) produces 'th', which is not a token"));
  // Out of order: "the" (257) before "he" (256).
  const std::string encoder = encoder_with("\"he\": 257, \"the\": 256}");
  CHECK(contains(read_error(encoder, "#version: 0.2\nh e\nt he\n"), "vocab.bpe:3: merge 2"));
}

TEST_CASE("an encoder.json nested 70,000 levels deep is refused, not printed") {
  const std::string deep = "{\"a\": " + std::string(70000, '[') + std::string(70000, ']') + "}";
  CHECK(contains(read_error(deep, good_merges), "nests deeper than 64 levels"));
}

TEST_CASE("a number beyond a double in encoder.json is named in our words") {
  const std::string error = read_error("{\"a\": 1e400}", good_merges);
  CHECK(contains(error, "encoder.json: not valid JSON (truncated?): number overflow parsing '1e400'"));
  CHECK_FALSE(contains(error, "json.exception"));
}

TEST_CASE("Hugging Face's names for the same files load too (vocab.json, merges.txt)") {
  ScratchDirectory scratch("gpt2-files");
  CHECK_FALSE(has_gpt2_vocabulary(scratch.path()));
  write_file(scratch.path() / "vocab.json", good_encoder);
  write_file(scratch.path() / "merges.txt", good_merges);
  CHECK(has_gpt2_vocabulary(scratch.path()));
  const BpeVocabulary vocabulary = read_gpt2_vocabulary(scratch.path());
  CHECK(vocabulary.size() == 259);
  CHECK(vocabulary.find("the") == 257);
  // A broken file is named by its own name.
  write_file(scratch.path() / "merges.txt", "#version: 0.2\nh e\nt\n");
  CHECK_THROWS_WITH(read_gpt2_vocabulary(scratch.path()), doctest::Contains("merges.txt:3"));
}
