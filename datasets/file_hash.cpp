#include "tinygpt/datasets/file_hash.h"

#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <vector>

#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

}  // namespace

Xxh3Hasher::Xxh3Hasher() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  XXH3_64bits_reset(state_);
}

Xxh3Hasher::~Xxh3Hasher() { XXH3_freeState(state_); }

void Xxh3Hasher::update(const void* bytes, std::size_t count) { XXH3_64bits_update(state_, bytes, count); }

uint64_t Xxh3Hasher::digest() const { return XXH3_64bits_digest(state_); }

void read_file_blocks(const std::string& path, uint64_t offset, uint64_t count,
                      const std::function<void(const char* bytes, std::size_t size)>& on_block) {
  std::ifstream file(path, std::ios::binary);
  check(file.good(), "cannot open '", path, "': ", std::strerror(errno));
  file.seekg(static_cast<std::streamoff>(offset));
  std::vector<char> block(static_cast<std::size_t>(std::min<uint64_t>(count, kBlockBytes)));
  for (uint64_t done = 0; done < count;) {
    const auto wanted = static_cast<std::streamsize>(std::min<uint64_t>(count - done, block.size()));
    file.read(block.data(), wanted);
    const auto got = static_cast<std::size_t>(file.gcount());
    check(!file.bad(), "cannot read '", path, "' at byte ", offset + done);
    check(got > 0, "'", path, "' ends before byte ", offset + count, " (read up to byte ", offset + done, ")");
    on_block(block.data(), got);
    done += got;
  }
}

uint64_t file_xxh3(const std::string& path) {
  std::error_code error;
  const uintmax_t bytes = std::filesystem::file_size(path, error);
  check(!error, "cannot read '", path, "': ", error.message());
  Xxh3Hasher hasher;
  read_file_blocks(path, 0, bytes, [&](const char* block, std::size_t size) { hasher.update(block, size); });
  return hasher.digest();
}

std::string xxh3_hex(uint64_t hash) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, hash);
  return text;
}

std::optional<uint64_t> parse_xxh3_hex(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  uint64_t hash = 0;
  for (const char c : text) {
    const bool digit = c >= '0' && c <= '9', lower = c >= 'a' && c <= 'f';
    if (!digit && !lower) return std::nullopt;
    hash = hash * 16 + static_cast<uint64_t>(digit ? c - '0' : c - 'a' + 10);
  }
  return hash;
}

}  // namespace tg
