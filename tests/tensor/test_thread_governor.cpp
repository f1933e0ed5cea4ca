// The thread governor (tensor/runtime/thread_governor.h): reading /proc, the decision,
// and, live, one thread fewer beside a busy process.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "tinygpt/tensor/runtime/thread_governor.h"
#include "tinygpt/tensor/runtime/threads.h"

using namespace tg;

TEST_CASE("parse_proc_stat: busy and total ticks of the named CPUs") {
  const std::string text =
      "cpu  500 10 200 9000 50 5 5 30 0 0\n"
      "cpu0 100 0 50 4500 20 1 2 10 0 0\n"
      "cpu1 400 10 150 4500 30 4 3 20 0 0\n"
      "intr 12345\n";
  const auto both = load::parse_proc_stat(text, {0, 1});
  REQUIRE(both.has_value());
  CHECK(both->busy == 100 + 50 + 1 + 2 + 400 + 10 + 150 + 4 + 3);  // user, nice, system, irq, softirq
  CHECK(both->total == 100 + 50 + 4500 + 20 + 1 + 2 + 10 + 400 + 10 + 150 + 4500 + 30 + 4 + 3 + 20);
  const auto second = load::parse_proc_stat(text, {1});
  REQUIRE(second.has_value());
  CHECK(second->busy == 400 + 10 + 150 + 4 + 3);
  CHECK_FALSE(load::parse_proc_stat(text, {2}).has_value());  // no such line
  CHECK_FALSE(load::parse_proc_stat("cpu0 1 2 3\n", {0}).has_value());  // too few fields
}

TEST_CASE("parse_process_ticks: utime + stime, whatever the command's name holds") {
  const std::string fields_after = " S 1 2 3 4 5 6 7 8 9 10 1234 567 0 0 20 0 1";
  CHECK(load::parse_process_ticks("42 (tinygpt)" + fields_after) == 1234u + 567u);
  CHECK(load::parse_process_ticks("42 (a (b) c)" + fields_after) == 1234u + 567u);
  CHECK_FALSE(load::parse_process_ticks("42 tinygpt").has_value());
  CHECK_FALSE(load::parse_process_ticks("42 (x) S 1 2").has_value());
}

TEST_CASE("threads_for_load: the CPUs other processes leave, at least 1, at most the ceiling") {
  CHECK(load::threads_for_load(0.0, 2, 2) == 2);
  CHECK(load::threads_for_load(0.2, 2, 2) == 2);   // light background work: keep both
  CHECK(load::threads_for_load(0.6, 2, 2) == 1);   // a busy process squeezed by ours
  CHECK(load::threads_for_load(1.0, 2, 2) == 1);   // a busy process with a core of its own
  CHECK(load::threads_for_load(3.0, 2, 2) == 1);   // never fewer than one
  CHECK(load::threads_for_load(1.0, 8, 4) == 4);   // never more than the ceiling
  CHECK(load::threads_for_load(5.0, 8, 8) == 3);
  CHECK(load::threads_for_load(-1.0, 2, 2) == 2);
}

TEST_CASE("adapt_threads_to_load: nothing before start; TINYGPT_THREADS=fixed is said") {
  const int before = num_threads();
  adapt_threads_to_load();  // not started in this program: no change, whatever the load
  CHECK(num_threads() == before);
  CHECK(why_threads_do_not_adapt() == "not started");
}

TEST_CASE("adapt_threads_to_load: one thread fewer while another process keeps a CPU busy") {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 2) return;  // nothing to take away
  const int ceiling_before = thread_ceiling();
  set_num_threads(static_cast<int>(cpus));
  start_adapting_threads_to_load();
  // Also with OpenBLAS kernels whose sums depend on the thread count (Haswell's:
  // ctest runs this case with them too), whose products are cut one way for every count.
  REQUIRE(why_threads_do_not_adapt().empty());
  const pid_t busy = fork();
  REQUIRE(busy >= 0);
  if (busy == 0) {  // the other process: spin until killed
    volatile uint64_t spin = 0;
    while (true) spin = spin + 1;
  }
  // Two readings 250 ms apart, and one more to be sure the busy child ran for a whole interval.
  for (int reading = 0; reading < 3; ++reading) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    adapt_threads_to_load();
  }
  const int under_load = num_threads();
  kill(busy, SIGKILL);
  waitpid(busy, nullptr, 0);
  CHECK(under_load <= cpus - 1);
  CHECK(under_load >= 1);
  CHECK(thread_ceiling() == cpus);  // the ceiling stays what set_num_threads said
  set_num_threads(ceiling_before);
}
