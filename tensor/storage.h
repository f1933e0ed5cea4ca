// Storage: one 64-byte-aligned buffer shared by every tensor that views it.
#pragma once
#include <cstddef>
#include <memory>

namespace tg {

class Storage {
 public:
  static constexpr size_t kAlignment = 64;  // a cache line; also enough for AVX-512 loads

  // Uninitialised memory of `bytes` bytes (rounded up to the alignment). Large
  // buffers come from a cache of freed ones of the same size when possible.
  static std::shared_ptr<Storage> allocate(size_t bytes);
  // Frees every idle cached buffer (the cache also does this itself when an
  // allocation fails).
  static void release_cached();

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  Storage(void* data, size_t bytes) : data_(data), bytes_(bytes) {}
  void* data_;
  size_t bytes_;
};

}  // namespace tg
