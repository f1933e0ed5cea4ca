// tensor/runtime/team.h: a team's shares cover the items exactly once, and its barrier
// orders phases, whether the threads meet while spinning or one has to sleep.
#include <doctest/doctest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tinygpt/tensor/runtime/team.h"
#include "tinygpt/tensor/runtime/threads.h"

using namespace tg;

TEST_CASE("Team::share: contiguous parts that cover every item once, sizes within one") {
  TeamBarrier barrier(3);
  for (const int64_t count : {0, 1, 2, 3, 10, 50257}) {
    CAPTURE(count);
    int64_t expected_begin = 0;
    for (int thread = 0; thread < 3; ++thread) {
      const auto [begin, end] = Team(barrier, thread, 3).share(count);
      CHECK(begin == expected_begin);
      CHECK(end - begin >= count / 3);
      CHECK(end - begin <= count / 3 + 1);
      expected_begin = end;
    }
    CHECK(expected_begin == count);
  }
}

TEST_CASE("run_in_team: each phase sees everything the previous one wrote, for 1 to 4 threads") {
  // Phase 1: each thread writes its share of `values` (round + index). Phase 2:
  // each thread sums all of them into its own slot. Without the barrier a thread
  // would read another's share from the round before. More threads than cores
  // (this machine has 2) also exercises the sleeping side of the barrier.
  const int default_threads = num_threads();
  for (const int threads : {1, 2, 3, 4}) {
    CAPTURE(threads);
    set_num_threads(threads);
    constexpr int64_t kCount = 1000;
    constexpr int kRounds = 100;
    std::vector<int64_t> values(kCount, 0);
    std::vector<int64_t> sums(static_cast<size_t>(threads) * kRounds, -1);
    int team_size = 0;
    run_in_team([&](Team& team) {
      if (team.thread() == 0) team_size = team.threads();
      for (int round = 0; round < kRounds; ++round) {
        const auto [begin, end] = team.share(kCount);
        for (int64_t i = begin; i < end; ++i) values[i] = round + i;
        team.sync();
        int64_t sum = 0;
        for (int64_t value : values) sum += value;
        sums[static_cast<size_t>(team.thread()) * kRounds + round] = sum;
        team.sync();  // nobody starts the next round's writes before everyone has summed
      }
    });
    CHECK(team_size == threads);
    for (int thread = 0; thread < team_size; ++thread)
      for (int round = 0; round < kRounds; ++round)
        CHECK(sums[static_cast<size_t>(thread) * kRounds + round] == round * kCount + kCount * (kCount - 1) / 2);
  }
  set_num_threads(default_threads);
}

TEST_CASE("TeamBarrier: a thread held up past the spin sleeps and is woken") {
  TeamBarrier barrier(2);
  int written = 0;
  int seen = -1;
  std::thread late([&] {
    std::this_thread::sleep_for(TeamBarrier::kSpin * 20);  // the other has long stopped spinning
    written = 42;
    barrier.arrive_and_wait();
  });
  barrier.arrive_and_wait();
  seen = written;
  late.join();
  CHECK(seen == 42);
}

TEST_CASE("run_in_team: one thread runs every phase alone") {
  const int threads = num_threads();
  set_num_threads(1);
  int calls = 0;
  run_in_team([&](Team& team) {
    CHECK(team.threads() == 1);
    CHECK(team.share(7) == std::pair<int64_t, int64_t>{0, 7});
    team.sync();
    ++calls;
  });
  set_num_threads(threads);
  CHECK(calls == 1);
}
