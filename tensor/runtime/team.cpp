#include "tinygpt/tensor/runtime/team.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tg {

namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();  // tells the core this is a spin loop (saves power, frees the sibling hyper-thread)
#endif
}

}  // namespace

void TeamBarrier::arrive_and_wait() {
  // Read the generation before arriving: the last thread bumps it only after
  // everyone has arrived, so a change means this barrier is passed.
  const uint32_t generation = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads_ - 1) {
    arrived_.store(0, std::memory_order_relaxed);  // reset before release: no one arrives again until the bump
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    return;
  }
  const auto give_up = std::chrono::steady_clock::now() + kSpin;
  for (int spins = 0; generation_.load(std::memory_order_acquire) == generation; ++spins) {
    cpu_relax();
    // Reading the clock costs ~20 ns: look at it only every 64 pauses.
    if (spins % 64 == 63 && std::chrono::steady_clock::now() > give_up) {
      generation_.wait(generation, std::memory_order_acquire);  // sleeps while it still equals `generation`
      return;
    }
  }
}

}  // namespace tg
