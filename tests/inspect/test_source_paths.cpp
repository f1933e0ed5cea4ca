// The source files the step-through points a reader to exist: the file each
// stage names for its forward and backward (inspect/stage_descriptions.cpp), and
// every source path the walk-through chapters quote (docs/walkthrough/*.md). A
// file renamed or moved without its mentions fails here, naming the path.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "tinygpt/inspect/stage_descriptions.h"
#include "tinygpt/inspect/walkthrough.h"
#include "tinygpt/tokenizer/hf_regex.h"
#include "tinygpt/tokenizer/utf8.h"
#include "tests/inspect/walkthrough_fixture.h"

using namespace tg;
using namespace tg::inspect;

namespace {

namespace fs = std::filesystem;

const fs::path kSourceDir = TINYGPT_SOURCE_DIR;  // the project root (tests/inspect/CMakeLists.txt)

std::string read_text(const fs::path& path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file, "cannot read ", path.string());
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// The source paths in `text`, relative to the project root: "nn/linear.cpp",
// "tests/models/test_gpt.cpp" (lower-case names ending in .h or .cpp). An include's
// "tinygpt/" prefix names the project root itself.
// Matched with PCRE2, through the tokenizers' wrapper (tokenizer/hf_regex.h), which needs valid UTF-8.
std::vector<std::string> source_paths_in(const std::string& text) {
  std::size_t offset = 0;
  for (tokenizer::Utf8Char character; offset < text.size() && (character = tokenizer::decode_utf8_char(text, offset)).valid;)
    offset += character.length;
  REQUIRE_MESSAGE(offset == text.size(), "byte ", offset, " is not UTF-8");
  static const tokenizer::HfRegex kPath(R"((?<![A-Za-z0-9_./-])[a-z0-9_]+(?:/[a-z0-9_]+)*\.(?:h|cpp)\b)",
                                        "tests/inspect/test_source_paths.cpp", "kPath");
  std::vector<std::string> paths;
  std::size_t start = 0;
  while (const std::optional<tokenizer::TextRange> match = kPath.find(text, start)) {
    std::string path = text.substr(match->start, match->end - match->start);
    if (path.rfind("tinygpt/", 0) == 0) path.erase(0, 8);
    paths.push_back(path);
    start = match->end;
  }
  return paths;
}

void check_exists(const std::string& path, const std::string& quoted_in) {
  CAPTURE(quoted_in);
  CAPTURE(path);
  CHECK(fs::is_regular_file(kSourceDir / path));
}

}  // namespace

TEST_CASE("stage descriptions: the file every stage names exists, for each model switch and tokenizer") {
  for (PositionalEncoding positional :
       {PositionalEncoding::Learned, PositionalEncoding::Sinusoidal, PositionalEncoding::Rope}) {
    GPT model(testing::tiny_walkthrough_config(positional), 7);
    const Walkthrough walkthrough = walk_through(model, testing::tiny_tokenizer(), "bad cafe", {});
    for (const Stage& stage : walkthrough.stages) check_exists(stage.implementation, stage.id);
  }
  for (const GPTConfig& config : {testing::tiny_llama_walkthrough_config(), testing::tiny_nanochat_walkthrough_config()}) {
    GPT model(config, 7);
    const Walkthrough walkthrough = walk_through(model, testing::tiny_tokenizer(), "bad cafe", {});
    for (const Stage& stage : walkthrough.stages) check_exists(stage.implementation, stage.id);
  }
  for (const char* tokenizer_kind : {"char", "gpt2"})
    check_exists(describe_stage("tokens", testing::tiny_walkthrough_config(), tokenizer_kind).implementation,
                 tokenizer_kind);
}

TEST_CASE("stage descriptions: every source path quoted in inspect/stage_descriptions.cpp exists") {
  const std::vector<std::string> paths = source_paths_in(read_text(kSourceDir / "inspect/stage_descriptions.cpp"));
  CHECK(paths.size() >= 10);  // a pattern that found nothing would check nothing
  for (const std::string& path : paths) check_exists(path, "inspect/stage_descriptions.cpp");
}

TEST_CASE("docs/walkthrough: every source path the chapters quote exists") {
  int64_t checked = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(kSourceDir / "docs/walkthrough")) {
    if (entry.path().extension() != ".md") continue;
    const std::string chapter = "docs/walkthrough/" + entry.path().filename().string();
    for (const std::string& path : source_paths_in(read_text(entry.path()))) {
      check_exists(path, chapter);
      ++checked;
    }
  }
  CHECK(checked >= 50);
}
