// tensor/storage.h: the cache of freed buffers reuses what a step freed and
// never holds more than an eighth above the most that was ever in use at once.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "tinygpt/tensor/storage.h"

using namespace tg;

namespace {

constexpr size_t kMegabyte = size_t{1} << 20;

void check_cache_under_high_water() {
  const Storage::CacheFigures figures = Storage::cache_figures();
  CHECK(figures.in_use + figures.idle <= figures.high_water + figures.high_water / 8);
}

}  // namespace

TEST_CASE("Storage cache: a freed buffer of a size is handed back for the next of that size, small or huge-page") {
  for (const size_t bytes : {size_t{64} * 1024, 3 * kMegabyte + 4096, 40 * kMegabyte}) {
    CAPTURE(bytes);
    void* first = Storage::allocate(bytes)->data();  // freed at the end of the statement
    const auto second = Storage::allocate(bytes);
    CHECK(second->data() == first);
    check_cache_under_high_water();
  }
}

TEST_CASE("Storage cache: idle buffers are freed before a new size would raise the peak") {
  Storage::release_cached();
  const Storage::CacheFigures before = Storage::cache_figures();
  CHECK(before.idle == 0);
  // Larger than anything in use so far, so that it sets a new high-water mark (mapped, never touched).
  const size_t big = before.high_water + 4 * kMegabyte;
  Storage::allocate(big).reset();
  CHECK(Storage::cache_figures().idle == big);
  CHECK(Storage::cache_figures().high_water == before.in_use + big);

  // A buffer of another size that fits under the ceiling (high water + 1/8)
  // beside the idle one would not, so the idle one goes.
  const auto bigger = Storage::allocate(big + big / 4);
  const Storage::CacheFigures after = Storage::cache_figures();
  CHECK(after.idle == 0);
  CHECK(after.high_water == before.in_use + big + big / 4);
  check_cache_under_high_water();
}

TEST_CASE("Storage cache: a step's buffers come back from the cache in the next step, within the peak") {
  Storage::release_cached();
  const std::vector<size_t> step_sizes = {8 * kMegabyte, 2 * kMegabyte, 8 * kMegabyte, 300 * 1024, 24 * kMegabyte};
  auto run_step = [&] {
    std::vector<std::shared_ptr<Storage>> activations;
    std::vector<void*> addresses;
    for (const size_t bytes : step_sizes) {
      activations.push_back(Storage::allocate(bytes));
      addresses.push_back(activations.back()->data());
      check_cache_under_high_water();
    }
    return addresses;
  };
  std::vector<void*> first = run_step();
  const size_t high_water = Storage::cache_figures().high_water;
  std::vector<void*> second = run_step();
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  CHECK(second == first);  // every buffer reused, none mapped afresh
  CHECK(Storage::cache_figures().high_water == high_water);
}

namespace {

// Resident memory of this process, from /proc/self/statm (pages).
size_t resident_bytes() {
  std::FILE* file = std::fopen("/proc/self/statm", "r");
  REQUIRE(file != nullptr);
  unsigned long size = 0, resident = 0;
  REQUIRE(std::fscanf(file, "%lu %lu", &size, &resident) == 2);
  std::fclose(file);
  return resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

bool all_zero(const Storage& storage) {
  const auto* bytes = static_cast<const unsigned char*>(storage.data());
  return std::all_of(bytes, bytes + storage.bytes(), [](unsigned char byte) { return byte == 0; });
}

}  // namespace

TEST_CASE("Storage::allocate_zeroed: zeros whether the buffer is reused or fresh, and a fresh one costs no memory") {
  for (const size_t bytes : {size_t{1000}, size_t{200} * 1024, 6 * kMegabyte}) {
    CAPTURE(bytes);
    {
      const auto dirty = Storage::allocate(bytes);
      std::memset(dirty->data(), 0xAB, bytes);
    }  // back to the cache: the next buffer of this size is this one, dirty
    const auto reused = Storage::allocate_zeroed(bytes);
    CHECK(all_zero(*reused));
  }
  Storage::release_cached();
  const size_t before = resident_bytes();
  const auto large = Storage::allocate_zeroed(512 * kMegabyte);  // fresh: nothing of this size is cached
  CHECK(resident_bytes() < before + 64 * kMegabyte);               // its pages are not touched
  const auto* bytes = static_cast<const unsigned char*>(large->data());
  CHECK(bytes[0] == 0);
  CHECK(bytes[512 * kMegabyte - 1] == 0);
}
