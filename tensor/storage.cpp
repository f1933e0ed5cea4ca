#include "tensor/storage.h"

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "tensor/error.h"
#include "tensor/profile.h"

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
    void* data = fresh(bytes);
    if (data == nullptr) {
      release_all();  // memory is short: give the idle buffers back and try once more
      data = fresh(bytes);
      check(data != nullptr, "allocate: cannot allocate ", bytes, " bytes (out of memory)");
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
    release(data, bytes);
  }

  void release_all() {
    std::lock_guard lock(mutex_);
    for (auto& [bytes, buffers] : free_)
      for (void* data : buffers) release(data, bytes);
    free_.clear();
    cached_bytes_ = 0;
  }

  ~BufferCache() { release_all(); }

 private:
  // Buffers of 2 MB and more are mapped on their own, starting on a 2 MB
  // boundary, with their whole 2 MB stretches given to transparent huge pages:
  // one TLB entry then covers 2 MB instead of 4 KB. Streaming the weights of a
  // decode step (every byte once per token) reads 5-10% faster, and GPT-2
  // loads about 30% faster, with fewer page faults to take
  // (bench/run_gpt2_inference.sh, bench_load_gpt2).
  // The tail under 2 MB keeps small pages, so no memory is spent on padding.
  static constexpr size_t kHugePageBytes = size_t{2} << 20;

  static void* fresh(size_t bytes) {
    if (bytes < kHugePageBytes) return std::aligned_alloc(Storage::kAlignment, bytes);
    // Map 2 MB more than asked, then unmap the unaligned head and the rest of the tail.
    const size_t mapped = bytes + kHugePageBytes;
    void* region = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(region);
    const uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    const uintptr_t end = aligned + page_rounded(bytes);
    if (aligned > start) munmap(region, aligned - start);
    if (start + mapped > end) munmap(reinterpret_cast<void*>(end), start + mapped - end);
    madvise(reinterpret_cast<void*>(aligned), bytes / kHugePageBytes * kHugePageBytes, MADV_HUGEPAGE);  // advice only
    return reinterpret_cast<void*>(aligned);
  }

  static void release(void* data, size_t bytes) {
    if (bytes < kHugePageBytes)
      std::free(data);
    else
      munmap(data, page_rounded(bytes));
  }

  static size_t page_rounded(size_t bytes) {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return (bytes + page - 1) / page * page;
  }

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
  // Bounded as torch bounds byte counts, so that rounding up to the alignment or to
  // a huge page cannot wrap around to a small buffer.
  check(bytes <= static_cast<size_t>(std::numeric_limits<int64_t>::max()), "allocate: ", bytes,
        " bytes is more than INT64_MAX");
  ProfileScope scope(ProfileFamily::allocation);
  scope.add_bytes(static_cast<double>(bytes));
  return std::shared_ptr<Storage>(new Storage(buffer_cache().take(rounded_size(bytes)), bytes));
}

std::shared_ptr<Storage> Storage::adopt(void* data, size_t bytes, std::function<void()> release) {
  check(reinterpret_cast<uintptr_t>(data) % kAlignment == 0, "Storage::adopt: data at ", data, " is not ",
        kAlignment, "-byte aligned");
  check(static_cast<bool>(release), "Storage::adopt: a release function is required");
  return std::shared_ptr<Storage>(new Storage(data, bytes, std::move(release)));
}

Storage::~Storage() {
  ProfileScope scope(ProfileFamily::free);
  if (release_)
    release_();
  else
    buffer_cache().give_back(data_, rounded_size(bytes_));
}

void Storage::release_cached() { buffer_cache().release_all(); }

}  // namespace tg
