// prepare from streams (datasets/spooled_stream.h): a pipe gives the ids its
// text gives as a file, meta.json records it as a stream with its hash, and the
// copy in the output directory is gone afterwards, after an error too.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/datasets/prepare_tokens.h"
#include "tinygpt/datasets/spooled_stream.h"
#include "tinygpt/datasets/token_dataset.h"
#include "tinygpt/tensor/error.h"
#include "tests/tokenizer/tokenizer_test_support.h"

using namespace tg;
using tokenizer::testing::read_file;
using tokenizer::testing::ScratchDirectory;
using tokenizer::testing::write_file;
namespace fs = std::filesystem;

namespace {

// A pipe holding `text` (less than the pipe's 64 KiB buffer) whose writer has
// finished: /dev/fd/N names it as process substitution does.
class FilledPipe {
 public:
  explicit FilledPipe(const std::string& text) {
    REQUIRE(::pipe(fds_) == 0);
    REQUIRE(::write(fds_[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
    ::close(fds_[1]);
  }
  ~FilledPipe() { ::close(fds_[0]); }
  std::string path() const { return "/dev/fd/" + std::to_string(fds_[0]); }

 private:
  int fds_[2] = {-1, -1};
};

PrepareOptions char_options(std::vector<std::string> sources, const fs::path& out) {
  PrepareOptions options;
  options.sources = std::move(sources);
  options.out_directory = out.string();
  options.piece_bytes = 64;
  return options;
}

// No copy of a stream is left in `directory`.
void check_no_copies(const fs::path& directory) {
  for (const auto& entry : fs::directory_iterator(directory)) {
    CAPTURE(entry.path());
    CHECK(entry.path().filename().string().rfind(kStreamCopyName, 0) != 0);
  }
}

// doctest's Contains, from a std::string.
doctest::Contains contains(const std::string& text) { return doctest::Contains(text.c_str()); }

std::string hamlet() {
  std::string text;
  for (int repeat = 0; repeat < 40; ++repeat) text += "To be, or not to be, that is the question:\n";
  return text;
}

}  // namespace

TEST_CASE("prepare from a pipe writes the token files of the same text as a file") {
  ScratchDirectory scratch("prepare-pipe");
  const std::string text = hamlet();
  write_file(scratch.path() / "hamlet.txt", text);
  prepare_token_dataset(char_options({(scratch.path() / "hamlet.txt").string()}, scratch.path() / "from_file"));
  FilledPipe pipe(text);
  const PrepareSummary summary = prepare_token_dataset(char_options({pipe.path()}, scratch.path() / "from_pipe"));

  for (const char* file : {"train.bin", "val.bin"})
    CHECK(read_file(scratch.path() / "from_pipe" / file) == read_file(scratch.path() / "from_file" / file));
  REQUIRE(summary.meta.sources.size() == 1);
  const TokenSourceMeta& source = summary.meta.sources[0];
  CHECK(source.file == pipe.path());
  CHECK(source.bytes == static_cast<int64_t>(text.size()));
  CHECK(source.stream);
  Xxh3Hasher hasher;
  hasher.update(text.data(), text.size());
  CHECK(source.xxh3 == hasher.digest());
  // meta.json keeps it: the dataset opens and says so.
  const PreparedDataset dataset = open_prepared_dataset((scratch.path() / "from_pipe").string());
  CHECK(dataset.meta.sources[0].stream);
  CHECK(dataset.meta.sources[0].xxh3 == hasher.digest());
  CHECK_FALSE(open_prepared_dataset((scratch.path() / "from_file").string()).meta.sources[0].stream);
  check_no_copies(scratch.path() / "from_pipe");
}

TEST_CASE("a stream past the limit, or that fails to encode, is refused and its copy removed") {
  ScratchDirectory scratch("prepare-pipe-errors");
  const fs::path out = scratch.path() / "out";
  {
    FilledPipe pipe(hamlet());
    PrepareOptions options = char_options({pipe.path()}, out);
    options.stream_limit_bytes = 1000;
    CHECK_THROWS_WITH_AS(prepare_token_dataset(options),
                         doctest::Contains("is a stream of more than 1000 bytes, more than prepare copies into"),
                         tg::Error);
    check_no_copies(out);
  }
  {
    // Two streams share the limit.
    FilledPipe first(std::string(600, 'a'));
    FilledPipe second(std::string(600, 'b'));
    PrepareOptions options = char_options({first.path(), second.path()}, out);
    options.stream_limit_bytes = 1000;
    CHECK_THROWS_WITH_AS(prepare_token_dataset(options),
                         contains(second.path() + "' is a stream of more than 400 bytes"), tg::Error);
    check_no_copies(out);
  }
  {
    FilledPipe pipe(std::string(300, 'a') + "\xFF");
    CHECK_THROWS_WITH_AS(prepare_token_dataset(char_options({pipe.path()}, out)),
                         contains(pipe.path() + "', in the part from byte 256: the corpus is not valid UTF-8"),
                         tg::Error);
    check_no_copies(out);
  }
  CHECK_FALSE(fs::exists(out / "meta.json"));
}

TEST_CASE("a copy that a killed prepare left is removed by the next") {
  ScratchDirectory scratch("prepare-stale-copy");
  const fs::path out = scratch.path() / "out";
  fs::create_directories(out);
  // No process has this id (it is past Linux's largest), as a killed prepare's would be gone.
  write_file(out / (std::string(kStreamCopyName) + ".tmp.999999999.0"), "a half-read stream");
  FilledPipe pipe(hamlet());
  prepare_token_dataset(char_options({pipe.path()}, out));
  check_no_copies(out);
}

TEST_CASE("meta.json: a stream's entry needs its hash; a file's entry may leave both out") {
  TokenDatasetMeta meta;
  meta.tokenizer = {"char", "ab", "", ""};
  meta.vocab_size = 2;
  meta.train = {"train.bin", 1, 0};
  meta.val = {"val.bin", 1, 0};
  meta.sources = {{"a.txt", 3}, {"-", 5, true, 0x0123456789abcdefull}};
  nlohmann::json json = nlohmann::json::parse(meta.to_json().dump());
  CHECK_FALSE(json["sources"][0].contains("stream"));
  CHECK(json["sources"][1]["xxh3"] == "0123456789abcdef");
  const TokenDatasetMeta read = TokenDatasetMeta::from_json(json, "meta.json");
  CHECK(read.sources[1].stream);
  CHECK(read.sources[1].xxh3 == 0x0123456789abcdefull);

  json["sources"][1].erase("xxh3");
  CHECK_THROWS_WITH_AS(TokenDatasetMeta::from_json(json, "meta.json"),
                       doctest::Contains("meta.json: \"sources[1].xxh3\" is missing"), tg::Error);
  json["sources"][1]["stream"] = "yes";
  CHECK_THROWS_WITH_AS(TokenDatasetMeta::from_json(json, "meta.json"),
                       doctest::Contains("\"sources[1].stream\" must be true or false, got \"yes\""), tg::Error);
}
