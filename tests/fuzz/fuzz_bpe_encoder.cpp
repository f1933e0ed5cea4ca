// Fuzzes GPT-2's byte-level BPE encoder (tokenizer/gpt2_tokenizer.h) with
// arbitrary bytes, checking what its header and its callers rely on:
//
//   - decode(encode(bytes)) == bytes, for any bytes (valid UTF-8 or not), with
//     "<|endoftext|>" read as text and as its own token;
//   - encoding the pieces between safe cuts (tokenizer/safe_cuts.h) one by one
//     gives the ids of the whole text, as `tinygpt prepare` assumes when it
//     encodes a large corpus a piece at a time;
//   - both merge algorithms (tokenizer/bpe_merge.h) give the same ids for each
//     pre-tokenised piece (up to 512 bytes).
//
// The vocabulary is trained once, at start-up, on a fixed text mixing the
// cases the pre-tokeniser and the merges treat apart (contractions, digits,
// runs of whitespace, several scripts, emoji, long runs of one letter), so the
// harness needs no file: the 256 bytes, every merge the text offers (460 of the
// 1000 allowed) and "<|endoftext|>", in GPT-2's own layout.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tests/fuzz/property.h"
#include "tinygpt/tokenizer/bpe_merge.h"
#include "tinygpt/tokenizer/bpe_trainer.h"
#include "tinygpt/tokenizer/gpt2_pretokenizer.h"
#include "tinygpt/tokenizer/gpt2_tokenizer.h"
#include "tinygpt/tokenizer/safe_cuts.h"

namespace {

namespace tt = tg::tokenizer;
using tg::fuzz::check_property;

std::string training_text() {
  static const std::string fragments[] = {
      "the ", "The ", "quick ", "brown ", "fox", " jumps", "don't", "we'll", "it's", "they're", "I've", "'m", "'d",
      "42", " 2024", "3.14159", "  ", "   ", "\n", "\n\n", "\t", "\r\n", "\xC2\xA0", "caf\xC3\xA9 ",
      "\xE4\xBD\xA0\xE5\xA5\xBD", "\xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 ", "\xD9\xA3\xD9\xA4",
      "\xF0\x9F\x98\x80", "!?", "...", "--", "<|endoftext|>", std::string(300, 'a'), "zzzzzzzz"};
  std::string text;
  uint32_t state = 1;  // a fixed linear congruential sequence: the same vocabulary on every run
  for (int i = 0; i < 20000; ++i) {
    state = state * 1664525u + 1013904223u;
    text += fragments[(state >> 8) % std::size(fragments)];
  }
  return text;
}

const tt::Gpt2Tokenizer& tokenizer() {
  static const tt::Gpt2Tokenizer trained(tt::train_bpe(training_text(), {.vocab_size = 1257, .min_pair_count = 2}));
  return trained;
}

// The ids of `text` encoded one safe piece at a time.
std::vector<tt::TokenId> encode_by_pieces(std::string_view text, tt::SpecialTokens specials) {
  std::vector<tt::TokenId> ids;
  size_t start = 0;
  for (size_t cut = tt::next_gpt2_cut(text, 0); cut != std::string_view::npos; cut = tt::next_gpt2_cut(text, cut + 1)) {
    tokenizer().encode_into(text.substr(start, cut - start), ids, specials);
    start = cut;
  }
  tokenizer().encode_into(text.substr(start), ids, specials);
  return ids;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const tt::SpecialTokens specials : {tt::SpecialTokens::as_text, tt::SpecialTokens::recognised}) {
    const std::vector<tt::TokenId> ids = tokenizer().encode(text, specials);
    check_property(tokenizer().decode(ids) == text, "decode(encode(bytes)) == bytes");
    check_property(encode_by_pieces(text, specials) == ids, "encoding between safe cuts gives the whole text's ids");
  }
  for (const std::string_view piece : tt::split_gpt2_pieces(text)) {
    // The scan is quadratic: compared up to four times the length where encoding switches to the heap.
    if (piece.size() > 4 * tt::longest_scanned_piece) continue;
    std::vector<tt::TokenId> scanned, heaped;
    tt::merge_by_scan(tokenizer().vocabulary(), piece, scanned);
    tt::merge_by_heap(tokenizer().vocabulary(), piece, heaped);
    check_property(scanned == heaped, "merge_by_scan and merge_by_heap agree on every piece");
  }
  return 0;
}
