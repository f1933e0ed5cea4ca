#include "tinygpt/tokenizer/hf_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "tinygpt/tokenizer/errors.h"

namespace tg::tokenizer {

namespace {

// One match-data block per thread (one pair of offsets is all we read), so a
// tokenizer serves many threads and no call allocates.
pcre2_match_data* thread_match_data() {
  thread_local std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
  return data.get();
}

}  // namespace

HfRegex::HfRegex(const std::string& pattern, const std::string& file, const std::string& field) : pattern_(pattern) {
  int error_code = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error_code, &error_offset, nullptr);
  if (!code) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof message);
    throw TokenizerFileError(file + ": " + field + ": the regex '" + pattern + "' does not compile (" +
                             reinterpret_cast<const char*>(message) + " at offset " + std::to_string(error_offset) +
                             ")");
  }
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);  // when JIT is unavailable, matching interprets: same results
  code_ = std::shared_ptr<void>(code, [](void* p) { pcre2_code_free(static_cast<pcre2_code*>(p)); });
}

std::optional<TextRange> HfRegex::find(std::string_view text, std::size_t start) const {
  auto* code = static_cast<const pcre2_code*>(code_.get());
  pcre2_match_data* data = thread_match_data();
  int result = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start,
                           PCRE2_NO_UTF_CHECK, data, nullptr);
  if (result == PCRE2_ERROR_JIT_STACKLIMIT) {  // a very long match: the interpreter keeps its stack on the heap
    result = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start,
                         PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, data, nullptr);
  }
  if (result == PCRE2_ERROR_NOMATCH) return std::nullopt;
  if (result < 0) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(result, message, sizeof message);
    throw EncodeError("the pre-tokenizer regex '" + pattern_ + "' failed on a text of " + std::to_string(text.size()) +
                      " bytes (" + reinterpret_cast<const char*>(message) + ")");
  }
  const PCRE2_SIZE* offsets = pcre2_get_ovector_pointer(data);
  return TextRange{offsets[0], offsets[1]};
}

}  // namespace tg::tokenizer
