// Character classes beyond ASCII: a two-stage look-up table built on first
// use from the generated ranges of unicode_ranges.inc.
//
// Stage one maps the high bits of a code point (code_point >> 8) to a block;
// stage two holds the classes of that block's 256 code points. Most blocks are
// identical (all 'other', all CJK letters), so they are stored once: the
// tables take about 60 KB, and a look-up is two loads.
#include "tinygpt/tokenizer/char_class.h"

#include <map>
#include <vector>

namespace tg::tokenizer {

namespace {

struct ClassRange {
  char32_t first;
  char32_t last;
  CharClass char_class;
};

constexpr ClassRange letter_and_number_ranges[] = {
#include "tinygpt/tokenizer/unicode_ranges.inc"
};

constexpr char32_t code_point_limit = 0x110000;
constexpr int block_bits = 8;
constexpr char32_t block_size = 1 << block_bits;

class ClassTable {
 public:
  ClassTable() {
    std::vector<CharClass> classes(code_point_limit, CharClass::other);
    for (const ClassRange& range : letter_and_number_ranges) {
      for (char32_t c = range.first; c <= range.last; ++c) classes[c] = range.char_class;
    }
    for (char32_t c = 0; c < code_point_limit; ++c) {
      if (is_unicode_whitespace(c)) classes[c] = CharClass::whitespace;
    }
    std::map<std::vector<CharClass>, std::uint16_t> block_ids;
    for (char32_t start = 0; start < code_point_limit; start += block_size) {
      std::vector<CharClass> block(classes.begin() + start, classes.begin() + start + block_size);
      const auto [found, inserted] = block_ids.emplace(block, static_cast<std::uint16_t>(block_ids.size()));
      if (inserted) blocks_.insert(blocks_.end(), block.begin(), block.end());
      block_of_.push_back(found->second);
    }
  }

  CharClass operator()(char32_t code_point) const {
    if (code_point >= code_point_limit) return CharClass::other;
    return blocks_[std::size_t{block_of_[code_point >> block_bits]} * block_size + (code_point & (block_size - 1))];
  }

 private:
  std::vector<std::uint16_t> block_of_;  // code_point >> 8 -> block number
  std::vector<CharClass> blocks_;        // the distinct blocks, back to back
};

}  // namespace

bool is_unicode_whitespace(char32_t code_point) {
  // PropList.txt, White_Space (unchanged since Unicode 6.3, which dropped U+180E).
  switch (code_point) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D:  // tab, LF, VT, FF, CR
    case 0x20:                                              // space
    case 0x85:                                              // next line (NEL)
    case 0xA0:                                              // no-break space
    case 0x1680:                                            // ogham space mark
    case 0x2028: case 0x2029:                               // line and paragraph separators
    case 0x202F:                                            // narrow no-break space
    case 0x205F:                                            // medium mathematical space
    case 0x3000:                                            // ideographic space
      return true;
    default:
      return code_point >= 0x2000 && code_point <= 0x200A;  // en quad .. hair space
  }
}

CharClass detail::classify_beyond_ascii(char32_t code_point) {
  static const ClassTable table;
  return table(code_point);
}

const char* unicode_version() { return "16.0"; }

}  // namespace tg::tokenizer
