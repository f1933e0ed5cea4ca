#include "cli/data_paths.h"

#include <cstdlib>
#include <filesystem>

#include "tinygpt/tensor/error.h"

// The project root this binary was built from (set by cli/CMakeLists.txt).
#ifndef TINYGPT_SOURCE_DIR
#define TINYGPT_SOURCE_DIR "."
#endif

namespace tg::cli {

namespace {

namespace fs = std::filesystem;

// `entry` (a file or a directory) in $TINYGPT_DATA_DIR, else ../shared/data, else data/.
std::string find_data(const char* command, const std::string& entry, const char* flag) {
  if (const char* data_dir = std::getenv("TINYGPT_DATA_DIR"); data_dir && *data_dir) {
    return (fs::path(data_dir) / entry).string();
  }
  const fs::path root = TINYGPT_SOURCE_DIR;
  for (const fs::path& candidate : {root / ".." / "shared" / "data" / entry, root / "data" / entry}) {
    if (fs::exists(candidate)) return fs::weakly_canonical(candidate).string();
  }
  fail(command, ": no ", flag, " given and ", entry, " was not found (in $TINYGPT_DATA_DIR, ",
       (root / ".." / "shared" / "data").string(), " or ", (root / "data").string(),
       "); run scripts/data.sh to fetch it, or pass ", flag);
}

}  // namespace

std::string default_corpus_path(const char* command) { return find_data(command, "tinyshakespeare.txt", "--data FILE"); }

std::string default_gpt2_vocab_dir(const char* command) { return find_data(command, "gpt2", "--vocab DIR"); }

}  // namespace tg::cli
