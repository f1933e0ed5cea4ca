// One file of token ids (train.bin or val.bin of a prepared dataset), read a
// window at a time, so that a dataset larger than memory can be trained on.
//
// The file is nothing but the ids, little-endian, each uint16 or uint32 (the
// dataset's meta.json says which; see datasets/token_dataset.h). Each window is
// one pread(2) of its bytes, through the page cache, which the process's
// resident memory never holds. Not a memory map: a mapped file that shrinks
// under the run (another program writing over it) ends the process with
// SIGBUS at the next read; a read of a shrunken file is an error naming it.
//
//   TokenFile train("data/shakespeare/train.bin", TokenDType::uint16, 65);
//   std::vector<int64_t> window(block_size + 1);
//   train.copy_window(start, block_size + 1, window.data());
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tg {

enum class TokenDType { uint16, uint32 };

const char* token_dtype_name(TokenDType dtype);  // "uint16", "uint32"
std::optional<TokenDType> token_dtype_from_name(std::string_view name);
int64_t token_dtype_bytes(TokenDType dtype);     // 2, 4
// The dtype of a vocabulary's ids: uint16 up to 65,535 ids, uint32 beyond (the
// format's rule, nanoGPT's too; a vocabulary of exactly 65,536 would fit 16 bits,
// but one rule in words is worth more than its two bytes).
TokenDType token_dtype_for_vocab_size(int64_t vocab_size);
// The largest vocabulary whose ids all fit `dtype`.
int64_t token_dtype_max_vocab_size(TokenDType dtype);

class TokenFile {
 public:
  // Opens `path` read-only. Throws tg::Error naming the file when it cannot be
  // opened, or when its size is not a whole number of `dtype` ids.
  // `vocab_size` is what copy_window checks ids against.
  TokenFile(std::string path, TokenDType dtype, int64_t vocab_size);
  ~TokenFile();
  TokenFile(TokenFile&& other) noexcept;
  TokenFile& operator=(TokenFile&& other) noexcept;
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  const std::string& path() const { return path_; }
  TokenDType dtype() const { return dtype_; }
  int64_t vocab_size() const { return vocab_size_; }
  int64_t size() const { return size_; }  // in tokens

  // Writes ids [start, start + count) of the file, widened to int64, to out[0..count).
  // Throws tg::Error naming the file when the window does not lie inside it, or
  // naming the id and its position when an id is >= vocab_size (a damaged file,
  // or one that belongs to another vocabulary), or when the file is shorter than it was
  // when opened. Read-only: threads may share a file.
  void copy_window(int64_t start, int64_t count, int64_t* out) const;

 private:
  void close();

  std::string path_;
  TokenDType dtype_;
  int64_t vocab_size_;
  int64_t size_ = 0;
  int fd_ = -1;
};

}  // namespace tg
