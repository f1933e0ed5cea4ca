// Storage: one 64-byte-aligned buffer shared by every tensor that views it.
// Usually tinygpt's own memory (allocate); it may also be memory someone else
// owns, such as a memory-mapped file (adopt), released by a function of theirs
// when the last tensor viewing it goes away.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>

namespace tg {

class Storage {
 public:
  static constexpr size_t kAlignment = 64;  // a cache line; also enough for AVX-512 loads

  // Uninitialised memory of `bytes` bytes (rounded up to the alignment). Large
  // buffers come from a cache of freed ones of the same size when possible.
  // Throws tg::Error naming the bytes when out of memory or past INT64_MAX.
  static std::shared_ptr<Storage> allocate(size_t bytes);
  // The same, all bytes zero. A buffer mapped fresh from the system is zero
  // already and is not written, so its pages cost no memory until they are: a
  // model built to be overwritten (or quantized) does not hold a float32 copy.
  static std::shared_ptr<Storage> allocate_zeroed(size_t bytes);
  // Frees every idle cached buffer (the cache also does this itself when an
  // allocation fails).
  static void release_cached();
  // Bytes of the cached sizes (64 KB and up): in use, idle in the cache, and
  // the most ever in use at once. in_use + idle stays within high_water * 9/8.
  struct CacheFigures {
    size_t in_use, idle, high_water;
  };
  static CacheFigures cache_figures();
  // Wraps `bytes` bytes at `data` (kAlignment-aligned, which a page-aligned
  // mapping is) that tinygpt does not own: `release` runs once, when the
  // Storage is destroyed, and must free them. Throws when `data` is misaligned (and then
  // does not call `release`: the caller still owns the memory).
  static std::shared_ptr<Storage> adopt(void* data, size_t bytes, std::function<void()> release);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }

  // How many in-place writes (raw::add_, mul_, fill_, copy_, an optimiser's step) the
  // memory has seen. Every view of it shares the count, as in PyTorch; backward
  // compares it with the count when an op saved the tensor (autograd/node.h).
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }

 private:
  Storage(void* data, size_t bytes, std::function<void()> release = {})
      : data_(data), bytes_(bytes), release_(std::move(release)) {}
  void* data_;
  size_t bytes_;
  std::function<void()> release_;  // empty for allocate()'s buffers, which go back to the cache
  std::atomic<uint64_t> version_{0};
};

}  // namespace tg
