// The number of threads, fitted to what other processes leave of the CPUs.
//
// OpenMP threads that wait for each other (spinning, or asleep until woken)
// make a step many times slower once another busy process takes one of the
// cores they run on: the thread it displaces holds up every barrier. On 2
// cores beside one busy process, libgomp's default spin makes a training step
// several times slower than on an idle machine, and a short spin (500) still
// slows it while costing idle speed (docs/performance.md has the figures).
// One thread fewer avoids the
// contention instead: the step runs on the core left, about as fast as a
// single thread can, and the idle machine keeps its speed.
//
// So a program that wants this (the tinygpt command line does) calls
// start_adapting_threads_to_load() once, and the long-running loops (training
// steps, generated tokens, evaluation batches) call adapt_threads_to_load()
// between steps, which does nothing otherwise. At most every 250 ms it
// reads how busy the CPUs this process may run on were since the last reading
// (/proc/stat), takes away this process's own time (/proc/self/stat), and sets
// the threads to the CPUs left, never more than set_num_threads() allowed
// (tensor/runtime/threads.h). Every kernel of ours gives the same result on any number
// of threads, and so do OpenBLAS's SkylakeX and Cooperlake kernels (a training
// run on 1 and on 2 threads writes identical checkpoints). Its Haswell kernels
// (AVX2 CPUs) do not, so there every Linear product is cut into tiles fixed by
// its shape and the thread ceiling (autograd/linear_op.cpp,
// tensor/cpu/product_tiles.h; attention's products are single-threaded calls
// already). So the changes never change a number, and --resume stays exact.
//
// TINYGPT_THREADS=fixed keeps the count the user set.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tg {

// TINYGPT_THREADS=fixed in the environment.
bool threads_fixed_by_user();
// From now on, adapt_threads_to_load() fits the thread count to the load,
// unless TINYGPT_THREADS=fixed (or /proc cannot be read).
void start_adapting_threads_to_load();
// Between two steps of a long loop: fit the thread count to the load (see above).
void adapt_threads_to_load();
// Whether adapt_threads_to_load() is at work: "" if so, else why not, for the
// start-up line ("TINYGPT_THREADS=fixed", "not started", "/proc/stat unreadable").
std::string why_threads_do_not_adapt();

namespace load {

// Clock ticks from /proc/stat: busy (user, nice, system, irq, softirq) and
// total (those, idle, iowait and steal), summed over the CPUs `cpus` names.
struct CpuTicks {
  uint64_t busy = 0, total = 0;
};
// Parses /proc/stat's text for the "cpuN" lines of the given CPUs; nullopt if
// a line is missing or malformed.
std::optional<CpuTicks> parse_proc_stat(const std::string& text, const std::vector<int>& cpus);
// Parses /proc/<pid>/stat's text: utime + stime, in clock ticks.
std::optional<uint64_t> parse_process_ticks(const std::string& text);

// The threads to run when other processes kept `others` CPUs busy (on
// average) of the `cpus` this process may use: the CPUs left, rounded down
// with 0.3 CPU of slack, at least 1 and at most `ceiling`.
int threads_for_load(double others, int cpus, int ceiling);

}  // namespace load

}  // namespace tg
