#include "tinygpt/models/data.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "tinygpt/tensor/error.h"

namespace tg {

std::string read_text_file(const std::string& path) {
  // An ifstream opens a directory and reads it as empty: say what it is instead.
  check(!std::filesystem::is_directory(path), "'", path, "' is a directory; give a text file");
  std::ifstream file(path, std::ios::binary);
  check(file.good(), "cannot read '", path, "': ", std::strerror(errno));
  std::ostringstream content;
  content << file.rdbuf();
  check(!file.bad(), "error while reading '", path, "'");
  return content.str();
}

void InMemoryTokens::copy_window(int64_t start, int64_t count, int64_t* out) const {
  std::copy(ids_.begin() + start, ids_.begin() + start + count, out);
}

namespace {

std::shared_ptr<const TokenSource> in_memory(std::vector<int64_t>::const_iterator begin,
                                             std::vector<int64_t>::const_iterator end) {
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(end - begin));
  for (auto id = begin; id != end; ++id) {
    check(*id >= 0 && *id <= std::numeric_limits<int32_t>::max(), "token id ", *id,
          " is outside the range of a vocabulary (0 to 2^31 - 1)");
    ids.push_back(static_cast<int32_t>(*id));
  }
  return std::make_shared<InMemoryTokens>(std::move(ids));
}

}  // namespace

TokenSplit::TokenSplit(std::string name, const std::vector<int64_t>& ids)
    : name_(std::move(name)), source_(in_memory(ids.begin(), ids.end())) {}

std::vector<int64_t> TokenSplit::ids(int64_t start, int64_t count) const {
  check(start >= 0 && count >= 0 && count <= size() - start, "the ", name_, " split has ", size(),
        " tokens; tokens ", start, " to ", start + count, " are out of range");
  std::vector<int64_t> ids(static_cast<size_t>(count));
  source_->copy_window(start, count, ids.data());
  return ids;
}

Batch TokenSplit::sample_batch(int64_t batch_size, int64_t block_size, Generator& generator) const {
  check(batch_size > 0 && block_size > 0, "sample_batch: batch size ", batch_size, " and block size ", block_size,
        " must be positive");
  // A window needs T+1 ids; starts range over [0, size - T - 1].
  check(size() > block_size, "sample_batch: the ", name_, " split has ", size(), " tokens, too few for one window of ",
        block_size + 1, " (block size ", block_size, " + 1); use a longer text or a smaller --block-size");
  const uint64_t start_count = static_cast<uint64_t>(size() - block_size);
  Batch batch{Tensor::empty({batch_size, block_size}, DType::Int64),
              Tensor::empty({batch_size, block_size}, DType::Int64)};
  int64_t* inputs = batch.inputs.data<int64_t>();    // (B, T)
  int64_t* targets = batch.targets.data<int64_t>();  // (B, T)
  std::vector<int64_t> window(static_cast<size_t>(block_size + 1));  // T+1 ids
  for (int64_t row = 0; row < batch_size; ++row) {
    const int64_t start = static_cast<int64_t>(generator.next_below(start_count));
    source_->copy_window(start, block_size + 1, window.data());
    std::copy(window.begin(), window.end() - 1, inputs + row * block_size);
    std::copy(window.begin() + 1, window.end(), targets + row * block_size);
  }
  return batch;
}

TokenSplits split_by_position(const std::vector<int64_t>& ids, double train_fraction) {
  check(train_fraction > 0 && train_fraction < 1, "split_by_position: train fraction ", train_fraction,
        " must be in (0, 1)");
  const auto train_size = static_cast<std::ptrdiff_t>(static_cast<double>(ids.size()) * train_fraction);
  return TokenSplits{TokenSplit("train", in_memory(ids.begin(), ids.begin() + train_size)),
                     TokenSplit("val", in_memory(ids.begin() + train_size, ids.end()))};
}

}  // namespace tg
