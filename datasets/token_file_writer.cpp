#include "tinygpt/datasets/token_file_writer.h"

#include <bit>
#include <filesystem>

#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/tensor/error.h"

namespace tg {

static_assert(std::endian::native == std::endian::little, "token files are little-endian");

SplitTokenWriter::SplitTokenWriter(const std::string& directory, TokenDType dtype, const std::string& who)
    : who_(who),
      dtype_(dtype),
      train_file_((std::filesystem::path(directory) / kTrainTokensFile).string(), who),
      val_file_((std::filesystem::path(directory) / kValTokensFile).string(), who) {}

void SplitTokenWriter::append(std::span<const tokenizer::TokenId> ids) {
  if (dtype_ == TokenDType::uint32) {
    train_file_.write(ids.data(), ids.size_bytes());
  } else {
    narrow_ids_.resize(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
      check(ids[i] <= 0xFFFF, who_, ": id ", ids[i], " does not fit a uint16 token file");
      narrow_ids_[i] = static_cast<uint16_t>(ids[i]);
    }
    train_file_.write(narrow_ids_.data(), narrow_ids_.size() * sizeof(uint16_t));
  }
  tokens_ += static_cast<int64_t>(ids.size());
}

void SplitTokenWriter::split(int64_t train_tokens) {
  check(train_tokens >= 0 && train_tokens <= tokens_, who_, ": cannot keep ", train_tokens, " of ", tokens_,
        " tokens for training");
  const auto width = static_cast<uint64_t>(token_dtype_bytes(dtype_));
  const uint64_t train_bytes = static_cast<uint64_t>(train_tokens) * width;
  const uint64_t val_bytes = static_cast<uint64_t>(tokens_ - train_tokens) * width;
  const std::string& written = train_file_.temporary_path();

  Xxh3Hasher val_hash;
  read_file_blocks(written, train_bytes, val_bytes, [&](const char* block, std::size_t size) {
    val_file_.write(block, size);
    val_hash.update(block, size);
  });
  train_file_.truncate(train_bytes);
  Xxh3Hasher train_hash;
  read_file_blocks(written, 0, train_bytes, [&](const char* block, std::size_t size) { train_hash.update(block, size); });

  train_ = {kTrainTokensFile, train_tokens, train_hash.digest()};
  val_ = {kValTokensFile, tokens_ - train_tokens, val_hash.digest()};
}

void SplitTokenWriter::commit() {
  train_file_.commit();
  val_file_.commit();
}

}  // namespace tg
