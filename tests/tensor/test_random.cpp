// The counter-based generator: reproducible, thread-count independent, sane statistics.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>

#include "tinygpt/tensor/random.h"

using namespace tg;

TEST_CASE("same seed, same numbers; consecutive draws and other seeds differ") {
  Generator a(42), b(42), other(43);
  const auto first = randn({100}, a).to_vector<float>();
  CHECK(first == randn({100}, b).to_vector<float>());
  CHECK(randn({100}, a).to_vector<float>() != first);
  CHECK(randn({100}, other).to_vector<float>() != first);
}

TEST_CASE("numbers do not depend on the thread count") {
  const int threads = omp_get_max_threads();
  Generator a(7), b(7);
  omp_set_num_threads(1);
  const auto one = randn({100000}, a).to_vector<float>();
  omp_set_num_threads(2);
  const auto two = randn({100000}, b).to_vector<float>();
  omp_set_num_threads(threads);
  CHECK(one == two);
}

TEST_CASE("distributions have the right moments and ranges") {
  Generator generator(1);
  const auto normal_values = normal({200000}, 3.0, 2.0, generator, DType::Float64).to_vector<double>();
  double mean = 0, square = 0;
  for (double v : normal_values) mean += v, square += v * v;
  mean /= normal_values.size();
  const double variance = square / normal_values.size() - mean * mean;
  CHECK(mean == doctest::Approx(3.0).epsilon(0.01));
  CHECK(std::sqrt(variance) == doctest::Approx(2.0).epsilon(0.01));
  for (float v : uniform({10000}, -1, 1, generator).to_vector<float>()) CHECK((v >= -1 && v < 1));
  for (int64_t v : randint({10000}, 5, 9, generator).to_vector<int64_t>()) CHECK((v >= 5 && v < 9));
  CHECK_THROWS_WITH_AS(randint({2}, 3, 3, generator), doctest::Contains("empty range"), Error);
  CHECK_THROWS_WITH_AS(randn({2}, generator, DType::Int64), doctest::Contains("needs a floating dtype"), Error);
}

TEST_CASE("generator state can be saved and restored") {
  Generator generator(5);
  randn({10}, generator);
  Generator restored(0);
  restored.set_state(generator.seed(), generator.counter());
  CHECK(rand({5}, generator).to_vector<float>() == rand({5}, restored).to_vector<float>());
}
