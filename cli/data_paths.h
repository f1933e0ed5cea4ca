// Where the commands look for the data they need when no flag names it.
//
// scripts/data.sh puts (or finds) the data in ../shared/data beside the checkout,
// or in data/ inside it; $TINYGPT_DATA_DIR overrides both. The binary knows the
// checkout it was built from (TINYGPT_SOURCE_DIR), so a build anywhere finds it.
#pragma once
#include <string>

namespace tg::cli {

// Tiny Shakespeare (tinyshakespeare.txt). Throws naming `command`, where it
// looked, and the flag to pass instead, when it is not found.
std::string default_corpus_path(const char* command);

// The directory holding GPT-2's encoder.json and vocab.bpe (gpt2/). Throws like
// default_corpus_path when it is not found.
std::string default_gpt2_vocab_dir(const char* command);

}  // namespace tg::cli
