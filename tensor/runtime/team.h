// A team: the threads of one OpenMP parallel region working through a
// sequence of dependent phases, meeting at a barrier between them.
//
//   run_in_team([&](Team& team) {
//     auto [begin, end] = team.share(rows);   // this thread's contiguous part
//     ... phase 1 on rows begin..end ...
//     team.sync();                            // everyone's phase 1 is done and visible
//     ... phase 2 ...
//   });
//
// Why: a batch-1 decode step is a chain of small dependent phases, 49 per token
// for gpt2 (four per layer: the QKV product with the attention of the same
// heads, its projection, the MLP's two products; then the LM head). Opening a parallel region per phase
// (the module-by-module path opens one per weight matrix, 49 for gpt2) wakes the
// sleeping OpenMP threads each time (OMP_WAIT_POLICY=PASSIVE puts them to sleep
// at once), tens of microseconds each. One region per step, with this barrier
// between phases, wakes them once.
//
// The barrier spins for a short while (kSpin) before it sleeps: the threads of
// a step arrive within microseconds of each other, and spinning meets them
// without a system call. Only a thread held up longer (a busy machine) makes
// the others sleep (std::atomic::wait, a futex on Linux).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include <omp.h>

namespace tg {

class TeamBarrier {
 public:
  // How long a thread spins at the barrier before it sleeps.
  static constexpr std::chrono::microseconds kSpin{50};

  explicit TeamBarrier(int threads) : threads_(threads) {}
  // Returns once all `threads` have called it; what each wrote before is visible to all after.
  void arrive_and_wait();

 private:
  const int threads_;
  std::atomic<int> arrived_{0};
  std::atomic<uint32_t> generation_{0};  // bumped by the last thread to arrive
};

class Team {
 public:
  Team(TeamBarrier& barrier, int thread, int threads) : barrier_(barrier), thread_(thread), threads_(threads) {}
  int thread() const { return thread_; }
  int threads() const { return threads_; }
  // This thread's part [begin, end) of `count` items: contiguous, sizes within one of each other.
  std::pair<int64_t, int64_t> share(int64_t count) const {
    return {count * thread_ / threads_, count * (thread_ + 1) / threads_};
  }
  void sync() { barrier_.arrive_and_wait(); }

 private:
  TeamBarrier& barrier_;
  const int thread_, threads_;
};

// Runs step(team) on every thread of one parallel region (the OpenMP team's
// size, tg::num_threads()). step must not throw: check arguments before.
template <class Step>
void run_in_team(Step&& step) {
  std::optional<TeamBarrier> barrier;
#pragma omp parallel
  {
    // The runtime may give fewer threads than asked for: count the ones we got.
#pragma omp single
    barrier.emplace(omp_get_num_threads());  // the single's implicit barrier publishes it
    Team team(*barrier, omp_get_thread_num(), omp_get_num_threads());
    step(team);
  }
}

}  // namespace tg
