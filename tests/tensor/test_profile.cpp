// tensor/runtime/profile.h: the profiler's accounting. Nothing is recorded outside a
// ProfiledStep or off its thread; nested scopes count self time, never twice;
// calls, bytes and passes land in the right rows. No assertion compares speeds.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>

#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

TEST_CASE("profile: nothing is recorded outside a ProfiledStep, nor by a step told not to record") {
  reset_profile();
  const Tensor a = ones({64, 64}), b = ones({64, 64});
  raw::add(a, b);
  {
    const ProfiledStep warm_up(/*record=*/false);
    raw::add(a, b);
  }
  const ProfileRecord record = profile_record();
  CHECK(record.steps == 0);
  CHECK(record.step_nanoseconds == 0);
  CHECK(record.rows.empty());
}

TEST_CASE("profile: an op records one call, its bytes read and written, and its allocation") {
  reset_profile();
  const Tensor a = ones({4, 8}), bias = ones({8});
  {
    const ProfiledStep step;
    raw::add(a, bias);  // (4, 8) + (8): reads 32 + 8 floats, writes 32
  }
  const ProfileRecord record = profile_record();
  CHECK(record.steps == 1);
  const ProfileRow* add = record.row(ProfileFamily::elementwise, ProfilePass::forward);
  REQUIRE(add);
  CHECK(add->calls == 1);
  CHECK(add->bytes == (32 + 8 + 32) * 4);
  CHECK(add->flops == 0);
  const ProfileRow* allocation = record.row(ProfileFamily::allocation, ProfilePass::forward);
  REQUIRE(allocation);
  CHECK(allocation->calls == 1);
  CHECK(allocation->bytes == 32 * 4);
}

TEST_CASE("profile: a scope inside another counts in its own row only (self time)") {
  reset_profile();
  {
    const ProfiledStep step;
    ProfileScope outer(ProfileFamily::layer_norm);
    {
      ProfileScope inner(ProfileFamily::copy);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  const ProfileRecord record = profile_record();
  const ProfileRow* outer = record.row(ProfileFamily::layer_norm, ProfilePass::forward);
  const ProfileRow* inner = record.row(ProfileFamily::copy, ProfilePass::forward);
  REQUIRE(outer);
  REQUIRE(inner);
  CHECK(inner->nanoseconds >= 20'000'000);
  // Counted twice, the two rows would add up to more than the step that holds them.
  CHECK(outer->nanoseconds + inner->nanoseconds <= record.step_nanoseconds);
  CHECK(record.covered_nanoseconds() == outer->nanoseconds + inner->nanoseconds);
}

TEST_CASE("profile: the pass is the innermost ProfilePassScope's, forward outside any") {
  reset_profile();
  const Tensor x = ones({16});
  {
    const ProfiledStep step;
    raw::mul(x, x);
    {
      const ProfilePassScope backward(ProfilePass::backward);
      raw::mul(x, x);
      {
        const ProfilePassScope update(ProfilePass::update);
        raw::mul(x, x);
      }
      raw::mul(x, x);
    }
  }
  const ProfileRecord record = profile_record();
  CHECK(record.row(ProfileFamily::elementwise, ProfilePass::forward)->calls == 1);
  CHECK(record.row(ProfileFamily::elementwise, ProfilePass::backward)->calls == 2);
  CHECK(record.row(ProfileFamily::elementwise, ProfilePass::update)->calls == 1);
}

TEST_CASE("profile: steps add up, and only the step's own thread records") {
  reset_profile();
  const Tensor x = ones({16});
  for (int i = 0; i < 3; ++i) {
    const ProfiledStep step;
    std::thread([&] { raw::contiguous(raw::transpose(ones({4, 4}), 0, 1)); }).join();  // another thread
    raw::neg(x);
  }
  const ProfileRecord record = profile_record();
  CHECK(record.steps == 3);
  CHECK(record.row(ProfileFamily::elementwise, ProfilePass::forward)->calls == 3);
  CHECK(record.row(ProfileFamily::copy, ProfilePass::forward) == nullptr);
}

TEST_CASE("profile: GEMM scopes add 2 m n k FLOPs per matrix and remember the largest shape") {
  reset_profile();
  {
    const ProfiledStep step;
    {
      ProfileScope scope(ProfileFamily::gemm, "small");
      scope.add_gemm({2, 3, 4}, 5);
    }
    {
      ProfileScope scope(ProfileFamily::gemm, "large");
      scope.add_gemm({6, 7, 8}, 1);
    }
  }
  const ProfileRecord record = profile_record();
  CHECK(record.row(ProfileFamily::gemm, ProfilePass::forward, "small")->flops == 2 * 5 * 2 * 3 * 4);
  CHECK(record.row(ProfileFamily::gemm, ProfilePass::forward, "large")->flops == 2 * 6 * 7 * 8);
  CHECK(record.flops() == 2 * 5 * 2 * 3 * 4 + 2 * 6 * 7 * 8);
  CHECK(record.largest_gemm.m == 6);
  CHECK(record.largest_gemm.n == 7);
  CHECK(record.largest_gemm.k == 8);
}

TEST_CASE("profile: one step at a time") {
  reset_profile();
  const ProfiledStep step;
  CHECK_THROWS_WITH(ProfiledStep(), doctest::Contains("already being profiled"));
}
