// Where a text may be cut so that its pieces, encoded one by one, give exactly
// the ids of the whole text. `tinygpt prepare` relies on this to read a corpus
// larger than memory a piece at a time and to encode the pieces on all threads.
//
// Char-level: any character boundary, i.e. any byte that does not continue a
// UTF-8 sequence.
//
// GPT-2's byte-level BPE merges inside pre-tokens, never across them
// (gpt2_pretokenizer.h), so a cut is safe when it leaves the pre-tokens as
// they are. The rule: cut just before a whitespace character that follows a
// non-whitespace character.
//
//   "the end.\n\nNext"  ->  "the end." | "\n\nNext"
//   "two words"         ->  "two" | " words"
//
// Why it is safe. Call c1 the character before the cut and c2 the one after it.
//  1. No pre-token of the whole text holds both c1 and c2: the only pieces that
//     hold whitespace and something else are " ?X+", a space *before* letters,
//     numbers or symbols; and the piece holding c1 (a run of letters, of
//     numbers or of other symbols, or a contraction) ends where whitespace starts.
//  2. The pieces before the cut do not change: the scanner decides each piece
//     by looking ahead, but no decision before the cut looks past c2 (is this
//     run over? is this "'" followed by "s" or "ll"?), and a whitespace c2 gives
//     the same answer as the end of the text: it ends every run and completes
//     no contraction.
//  3. The pieces after the cut do not change: the scanner carries nothing from
//     one piece to the next, so scanning the rest from the cut is scanning the
//     whole text from there.
// The trap this avoids is `\s+(?!\S)`: whitespace that ends a text is one piece,
// but the same whitespace before a word leaves its last character to the word.
// "\n\n" at the end of a text is one token (628), before "Next" it is two (198,
// 198). A piece never ends in whitespace here, so that case never arises.
//
// Bytes that are not valid UTF-8 are 'other' symbols, as the scanner treats
// them; c2 is always a whole, valid character, so a cut never splits one.
// A text with no whitespace has no cut at all: its pieces grow until there is one.
#pragma once

#include <cstddef>
#include <string_view>

namespace tg::tokenizer {

// The first cut at a position p with from <= p < text.size() and p > 0, or
// std::string_view::npos when there is none. Only the bytes of `text` are
// looked at: a character cut short by the end of `text` is never taken for
// whitespace, so a caller that appends more bytes should look again from
// text.size() - 3 (the most bytes a cut-short character can have).
std::size_t next_character_cut(std::string_view text, std::size_t from);
std::size_t next_gpt2_cut(std::string_view text, std::size_t from);

}  // namespace tg::tokenizer
