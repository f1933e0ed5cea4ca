// The checksum of a prepared dataset's token files: XXH3-64 (xxHash, from the
// distribution's libxxhash), chosen because it hashes at memory speed (tens of
// GB/s), so checking a file costs what reading it costs. It detects damage,
// not tampering: it is no cryptographic hash.
//
// Files are hashed by reading them in blocks into one buffer, never by mapping
// them: a multi-gigabyte check then holds one block of memory, not the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

struct XXH3_state_s;

namespace tg {

// XXH3-64 (seed 0) of bytes given in any number of parts.
class Xxh3Hasher {
 public:
  Xxh3Hasher();
  ~Xxh3Hasher();
  Xxh3Hasher(const Xxh3Hasher&) = delete;
  Xxh3Hasher& operator=(const Xxh3Hasher&) = delete;

  void update(const void* bytes, std::size_t count);
  uint64_t digest() const;

 private:
  XXH3_state_s* state_;
};

// Calls on_block for consecutive blocks of bytes [offset, offset + count) of a
// file. Throws tg::Error naming the file when it cannot be read or ends early.
void read_file_blocks(const std::string& path, uint64_t offset, uint64_t count,
                      const std::function<void(const char* bytes, std::size_t size)>& on_block);

// The hash of a whole file.
uint64_t file_xxh3(const std::string& path);

// As meta.json writes it: 16 lower-case hex digits.
std::string xxh3_hex(uint64_t hash);
// The inverse; nullopt unless `text` is exactly 16 hex digits.
std::optional<uint64_t> parse_xxh3_hex(std::string_view text);

}  // namespace tg
