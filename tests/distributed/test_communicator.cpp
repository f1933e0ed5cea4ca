// The pieces of distributed/ that need no second process: a single process as
// a job of one rank, and how a launcher is recognised.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "tinygpt/distributed/communicator.h"
#include "tinygpt/distributed/job.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"

namespace tg::dist {

TEST_CASE("a single process is a job of one rank whose collectives are identities") {
  Communicator& job = single_process();
  CHECK(job.rank() == 0);
  CHECK(job.size() == 1);
  CHECK(job.is_root());
  float floats[3] = {1.5f, -2.0f, 3.25f};
  job.all_reduce_sum(std::span<float>(floats));
  CHECK(floats[1] == -2.0f);
  const uint64_t values[2] = {7, 9};
  CHECK(job.all_gather(values) == std::vector<uint64_t>{7, 9});
  Tensor gradients = from_vector(std::vector<float>{1, 2, 3}, {3});
  all_reduce_mean(job, gradients);
  CHECK(gradients.data<float>()[2] == 3.0f);
}

TEST_CASE("all_reduce_mean refuses what is not one contiguous float buffer") {
  class TwoRanks final : public Communicator {
   public:
    int rank() const override { return 0; }
    int size() const override { return 2; }
    std::string description() const override { return "two ranks (test)"; }
    void all_reduce_sum(std::span<float> values) override {
      for (float& value : values) value *= 2;  // as if the other rank held the same values
    }
    void all_reduce_sum(std::span<double>) override {}
    std::vector<uint64_t> all_gather(std::span<const uint64_t> values) override { return {values.begin(), values.end()}; }
    [[noreturn]] void abort(int) override { std::abort(); }
  } job;
  Tensor gradients = from_vector(std::vector<float>{1, 2, 3, 4}, {2, 2});
  all_reduce_mean(job, gradients);  // the sum of two equal buffers, halved: unchanged
  CHECK(gradients.data<float>()[3] == 4.0f);
  Tensor transposed = raw::transpose(gradients, 0, 1);
  CHECK_THROWS_WITH(all_reduce_mean(job, transposed),
                    doctest::Contains("needs a contiguous float32 tensor, got float32 (not contiguous)"));
  Tensor doubles = from_vector(std::vector<double>{1, 2}, {2});
  CHECK_THROWS_WITH(all_reduce_mean(job, doubles), doctest::Contains("got float64"));
}

TEST_CASE("a launcher is recognised by the world size it puts in the environment") {
  const char* variables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
  for (const char* variable : variables) unsetenv(variable);
  CHECK(launcher_world_size() == 0);
  setenv("PMI_SIZE", "4", 1);
  CHECK(launcher_world_size() == 4);
  for (const char* unusable : {"", "four", "4x", "0", "-3", "99999999999"}) {
    CAPTURE(std::string(unusable));
    setenv("PMI_SIZE", unusable, 1);
    CHECK(launcher_world_size() == 0);
  }
  unsetenv("PMI_SIZE");
}

}  // namespace tg::dist
