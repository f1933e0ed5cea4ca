#include "tinygpt/tensor/random.h"

#include <cmath>
#include <numbers>

#include "tinygpt/tensor/runtime/threads.h"

namespace tg {

uint64_t Generator::bits(uint64_t counter) const {
  // SplitMix64 finaliser over a key that mixes seed and counter; passes BigCrush
  // as a stream and is cheap enough to compute per element.
  uint64_t z = seed_ * 0x9E3779B97F4A7C15ULL + counter * 0xD1B54A32D192ED03ULL + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

double Generator::uniform01(uint64_t counter) const {
  return static_cast<double>(bits(counter) >> 11) * 0x1.0p-53;
}

uint64_t Generator::next_below(uint64_t bound) {
  check(bound > 0, "Generator::next_below: bound must be positive");
  return static_cast<uint64_t>(next_uniform() * static_cast<double>(bound)) % bound;
}

namespace {

// Fills a fresh tensor with value(i) for element i, in parallel.
template <class Fill>
Tensor generate(const Shape& shape, DType dtype, const char* op, Fill&& value) {
  Tensor out = Tensor::empty(shape, dtype);
  visit_numeric(dtype, op, [&]<class T>() {
    T* data = out.data<T>();
    const int64_t count = out.numel();
#pragma omp parallel for schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(value(i));
  });
  return out;
}

}  // namespace

Tensor uniform(const Shape& shape, double low, double high, Generator& generator, DType dtype) {
  check(is_floating(dtype), "uniform: needs a floating dtype, got ", dtype_name(dtype));
  const uint64_t first = generator.advance(static_cast<uint64_t>(numel(shape, "uniform")));
  return generate(shape, dtype, "uniform", [&](int64_t i) { return low + (high - low) * generator.uniform01(first + i); });
}

Tensor rand(const Shape& shape, Generator& generator, DType dtype) { return uniform(shape, 0, 1, generator, dtype); }

Tensor normal(const Shape& shape, double mean, double std, Generator& generator, DType dtype) {
  check(is_floating(dtype), "normal: needs a floating dtype, got ", dtype_name(dtype));
  check(std >= 0, "normal: std must be non-negative, got ", std);
  // Box-Muller: element i uses the two uniforms at counters 2i and 2i+1.
  const uint64_t first = generator.advance(2 * static_cast<uint64_t>(numel(shape, "normal")));
  return generate(shape, dtype, "normal", [&](int64_t i) {
    const double u1 = 1.0 - generator.uniform01(first + 2 * i);  // (0, 1]: log is finite
    const double u2 = generator.uniform01(first + 2 * i + 1);
    return mean + std * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  });
}

Tensor randn(const Shape& shape, Generator& generator, DType dtype) { return normal(shape, 0, 1, generator, dtype); }

Tensor randint(const Shape& shape, int64_t low, int64_t high, Generator& generator) {
  check(low < high, "randint: empty range [", low, ", ", high, ")");
  const uint64_t first = generator.advance(static_cast<uint64_t>(numel(shape, "randint")));
  const uint64_t span = static_cast<uint64_t>(high - low);
  return generate(shape, DType::Int64, "randint",
                  [&](int64_t i) { return low + static_cast<int64_t>(generator.bits(first + i) % span); });
}

}  // namespace tg
