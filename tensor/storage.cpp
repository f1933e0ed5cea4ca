#include "tinygpt/tensor/storage.h"

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <sys/mman.h>
#include <unistd.h>
#include <unordered_map>
#include <vector>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/profile.h"

namespace tg {

namespace {

// A cache of freed buffers, by exact (rounded) size. A training step allocates
// the same sizes every iteration; handing back a buffer whose pages are already
// mapped saves the page faults and kernel zeroing that a fresh large
// allocation costs each time (measured in bench/bench_elementwise: a 64 MB
// add ran at about a quarter of copy bandwidth without it). Small buffers are left to malloc, which already recycles them.
//
// How much it keeps: the buffers in use plus the idle ones stay within an
// eighth above the most that was ever in use at once (the high-water mark). It
// holds a whole step's activations between steps; before mapping a buffer it
// cannot serve, it frees idle buffers, of the sizes used longest ago, until the
// new one fits under that ceiling. The eighth is there because buffers of
// exact sizes do not pack into a step's peak: a step that frees 10 MB of one
// size and later takes 10 MB of another needs both. Without it a `baby` step
// still took 411 page faults (peak 3,206 MB), with it 11 (3,402 MB); the
// 1 GB cap it replaces took 1,400 huge-page faults a step (peak 3,442 MB).
class BufferCache {
 public:
  static constexpr size_t kMinCachedBytes = 64 * 1024;

  // `fresh_mapping` is set when the buffer is a new anonymous mapping, whose bytes are zero.
  void* take(size_t bytes, bool& fresh_mapping) {
    fresh_mapping = false;
    if (bytes < kMinCachedBytes) {
      if (void* data = fresh(bytes)) return data;
      std::lock_guard lock(mutex_);
      return fresh_when_short(bytes);
    }
    std::lock_guard lock(mutex_);
    SizeClass& size_class = free_[bytes];
    size_class.last_use = ++uses_;
    if (!size_class.idle.empty()) {
      void* data = size_class.idle.back();
      size_class.idle.pop_back();
      idle_bytes_ -= bytes;
      note_in_use(bytes);
      return data;
    }
    // Make room under the ceiling (which rises when this buffer raises the peak).
    release_idle_above(std::max(ceiling(), in_use_bytes_ + bytes) - in_use_bytes_ - bytes);
    void* data = fresh(bytes);
    if (data == nullptr) data = fresh_when_short(bytes);
    note_in_use(bytes);
    fresh_mapping = bytes >= kHugePageBytes;
    return data;
  }

  void give_back(void* data, size_t bytes) {
    if (bytes < kMinCachedBytes) return release(data, bytes);
    std::lock_guard lock(mutex_);
    in_use_bytes_ -= bytes;
    free_[bytes].idle.push_back(data);
    idle_bytes_ += bytes;
  }

  void release_all() {
    std::lock_guard lock(mutex_);
    release_idle_above(0);
  }

  Storage::CacheFigures figures() {
    std::lock_guard lock(mutex_);
    return {in_use_bytes_, idle_bytes_, high_water_bytes_};
  }

  ~BufferCache() { release_all(); }

 private:
  struct SizeClass {
    std::vector<void*> idle;
    uint64_t last_use = 0;  // the uses_ count when a buffer of this size was last taken
  };

  // Frees idle buffers, least recently used sizes first, until at most `limit` bytes are idle.
  void release_idle_above(size_t limit) {
    while (idle_bytes_ > limit) {
      auto oldest = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (!it->second.idle.empty() && (oldest == free_.end() || it->second.last_use < oldest->second.last_use))
          oldest = it;
      release(oldest->second.idle.back(), oldest->first);
      oldest->second.idle.pop_back();
      idle_bytes_ -= oldest->first;
    }
  }

  size_t ceiling() const { return high_water_bytes_ + high_water_bytes_ / 8; }

  void note_in_use(size_t bytes) {
    in_use_bytes_ += bytes;
    high_water_bytes_ = std::max(high_water_bytes_, in_use_bytes_);
  }

  // Memory is short: give every idle buffer back and try once more. Called with the lock held.
  void* fresh_when_short(size_t bytes) {
    release_idle_above(0);
    void* data = fresh(bytes);
    check(data != nullptr, "allocate: cannot allocate ", bytes, " bytes (out of memory)");
    return data;
  }

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
  std::unordered_map<size_t, SizeClass> free_;
  size_t idle_bytes_ = 0;
  size_t in_use_bytes_ = 0;      // taken and not given back (cached sizes only)
  size_t high_water_bytes_ = 0;  // the most in_use_bytes_ has been
  uint64_t uses_ = 0;
};

BufferCache& buffer_cache() {
  static BufferCache cache;
  return cache;
}

size_t rounded_size(size_t bytes) {
  const size_t rounded = (bytes + Storage::kAlignment - 1) / Storage::kAlignment * Storage::kAlignment;
  return rounded == 0 ? Storage::kAlignment : rounded;
}

// Bounded as torch bounds byte counts, so that rounding up to the alignment or to
// a huge page cannot wrap around to a small buffer. `fresh_mapping`: see BufferCache::take.
void* take_buffer(size_t bytes, bool& fresh_mapping) {
  check(bytes <= static_cast<size_t>(std::numeric_limits<int64_t>::max()), "allocate: ", bytes,
        " bytes is more than INT64_MAX");
  ProfileScope scope(ProfileFamily::allocation);
  scope.add_bytes(static_cast<double>(bytes));
  return buffer_cache().take(rounded_size(bytes), fresh_mapping);
}

}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t bytes) {
  bool fresh_mapping = false;
  return std::shared_ptr<Storage>(new Storage(take_buffer(bytes, fresh_mapping), bytes));
}

std::shared_ptr<Storage> Storage::allocate_zeroed(size_t bytes) {
  bool fresh_mapping = false;
  void* data = take_buffer(bytes, fresh_mapping);
  if (!fresh_mapping) std::memset(data, 0, bytes);
  return std::shared_ptr<Storage>(new Storage(data, bytes));
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

Storage::CacheFigures Storage::cache_figures() { return buffer_cache().figures(); }

}  // namespace tg
