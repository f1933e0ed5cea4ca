// Seeded random numbers that do not depend on the thread count.
//
// The generator is counter-based: element i of a draw is a pure function of
// (seed, counter + i), so any thread may compute any element and the result is
// the same whether 1 or 16 threads fill the tensor. Each draw advances the
// counter by the number of values it used, so consecutive draws differ.
#pragma once
#include <cstdint>

#include "tinygpt/tensor/tensor.h"

namespace tg {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : seed_(seed) {}

  uint64_t seed() const { return seed_; }
  uint64_t counter() const { return counter_; }
  // Resuming from a checkpoint restores both.
  void set_state(uint64_t seed, uint64_t counter) { seed_ = seed, counter_ = counter; }

  // Reserves `count` values; returns the first counter of the block.
  uint64_t advance(uint64_t count) {
    const uint64_t first = counter_;
    counter_ += count;
    return first;
  }

  // The 64 random bits for one counter value (a SplitMix64-style mix of seed and counter).
  uint64_t bits(uint64_t counter) const;
  // Uniform in [0, 1) with 53 random bits.
  double uniform01(uint64_t counter) const;

  // A single draw, advancing the counter (for sampling a token, shuffling, ...).
  double next_uniform() { return uniform01(advance(1)); }
  uint64_t next_below(uint64_t bound);  // uniform integer in [0, bound)

 private:
  uint64_t seed_;
  uint64_t counter_ = 0;
};

// Floating-point tensors drawn from `generator`.
Tensor rand(const Shape& shape, Generator& generator, DType dtype = DType::Float32);   // U[0, 1)
Tensor uniform(const Shape& shape, double low, double high, Generator& generator, DType dtype = DType::Float32);
Tensor randn(const Shape& shape, Generator& generator, DType dtype = DType::Float32);  // N(0, 1)
Tensor normal(const Shape& shape, double mean, double std, Generator& generator, DType dtype = DType::Float32);
// Integers uniform in [low, high), as int64.
Tensor randint(const Shape& shape, int64_t low, int64_t high, Generator& generator);

}  // namespace tg
