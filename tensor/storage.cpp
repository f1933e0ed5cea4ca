#include "tensor/storage.h"

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "tensor/error.h"

namespace tg {

namespace {

// A cache of freed buffers, by exact (rounded) size. A training step allocates
// the same sizes every iteration; handing back a buffer whose pages are already
// mapped saves the page faults and kernel zeroing that a fresh large
// allocation costs each time (measured in bench/bench_elementwise: a 64 MB
// add ran at about a quarter of copy bandwidth without it). Small buffers are
// left to malloc, which already recycles them.
class BufferCache {
 public:
  static constexpr size_t kMinCachedBytes = 64 * 1024;
  static constexpr size_t kMaxCachedBytes = size_t{1} << 30;  // never hold more than 1 GiB idle

  void* take(size_t bytes) {
    if (bytes >= kMinCachedBytes) {
      std::lock_guard lock(mutex_);
      auto found = free_.find(bytes);
      if (found != free_.end() && !found->second.empty()) {
        void* data = found->second.back();
        found->second.pop_back();
        cached_bytes_ -= bytes;
        return data;
      }
    }
    void* data = std::aligned_alloc(Storage::kAlignment, bytes);
    if (data == nullptr) {
      release_all();  // memory is short: give the idle buffers back and try once more
      data = std::aligned_alloc(Storage::kAlignment, bytes);
      if (data == nullptr) throw std::bad_alloc();
    }
    return data;
  }

  void give_back(void* data, size_t bytes) {
    if (bytes >= kMinCachedBytes) {
      std::lock_guard lock(mutex_);
      if (cached_bytes_ + bytes <= kMaxCachedBytes) {
        free_[bytes].push_back(data);
        cached_bytes_ += bytes;
        return;
      }
    }
    std::free(data);
  }

  void release_all() {
    std::lock_guard lock(mutex_);
    for (auto& [bytes, buffers] : free_)
      for (void* data : buffers) std::free(data);
    free_.clear();
    cached_bytes_ = 0;
  }

  ~BufferCache() { release_all(); }

 private:
  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  size_t cached_bytes_ = 0;
};

BufferCache& buffer_cache() {
  static BufferCache cache;
  return cache;
}

size_t rounded_size(size_t bytes) {
  const size_t rounded = (bytes + Storage::kAlignment - 1) / Storage::kAlignment * Storage::kAlignment;
  return rounded == 0 ? Storage::kAlignment : rounded;
}

}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  return std::shared_ptr<Storage>(new Storage(buffer_cache().take(rounded_size(bytes)), bytes));
}

std::shared_ptr<Storage> Storage::adopt(void* data, size_t bytes, std::function<void()> release) {
  check(reinterpret_cast<uintptr_t>(data) % kAlignment == 0, "Storage::adopt: data at ", data, " is not ",
        kAlignment, "-byte aligned");
  check(static_cast<bool>(release), "Storage::adopt: a release function is required");
  return std::shared_ptr<Storage>(new Storage(data, bytes, std::move(release)));
}

Storage::~Storage() {
  if (release_)
    release_();
  else
    buffer_cache().give_back(data_, rounded_size(bytes_));
}

void Storage::release_cached() { buffer_cache().release_all(); }

}  // namespace tg
