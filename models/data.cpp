#include "models/data.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tensor/error.h"

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
  for (int64_t row = 0; row < batch_size; ++row) {
    const int64_t start = static_cast<int64_t>(generator.next_below(start_count));
    const int64_t* window = ids_.data() + start;  // T+1 ids
    std::copy(window, window + block_size, inputs + row * block_size);
    std::copy(window + 1, window + block_size + 1, targets + row * block_size);
  }
  return batch;
}

TokenSplits split_by_position(const std::vector<int64_t>& ids, double train_fraction) {
  check(train_fraction > 0 && train_fraction < 1, "split_by_position: train fraction ", train_fraction,
        " must be in (0, 1)");
  const auto train_size = static_cast<std::ptrdiff_t>(static_cast<double>(ids.size()) * train_fraction);
  return TokenSplits{TokenSplit("train", std::vector<int64_t>(ids.begin(), ids.begin() + train_size)),
                     TokenSplit("val", std::vector<int64_t>(ids.begin() + train_size, ids.end()))};
}

}  // namespace tg
