// tensor/storage.h: the cache of freed buffers reuses what a step freed and
// never holds more than an eighth above the most that was ever in use at once.
#include <doctest/doctest.h>

#include <algorithm>
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
