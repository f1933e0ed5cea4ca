// One knob for every thread: OpenMP's team, which the OpenMP build of OpenBLAS
// shares, so BLAS calls and our kernels never oversubscribe the cores.
#pragma once
#include <cstdint>
#include <string>

namespace tg {

// Below this many elements a kernel runs on the calling thread: waking the team
// costs more than it saves.
inline constexpr int64_t kParallelThreshold = 32768;

// The threads every parallel region and BLAS call uses from now on, and the
// most that adapt_threads_to_load (tensor/runtime/thread_governor.h) may use.
void set_num_threads(int threads);
// The threads in use now.
int num_threads();
// The most threads: set_num_threads's, or OpenMP's default (OMP_NUM_THREADS, or
// one per CPU) until it is called.
int thread_ceiling();
// Sets the threads in use, leaving the ceiling as it is (the governor's knob).
void use_threads(int threads);
// "2 OpenMP threads; OpenBLAS 0.3.21 ... (OpenMP build), 2 threads; OpenBLAS kernels ...; idle
// threads spin ..." for start-up logs (the last two: tensor/runtime/process_environment.h).
std::string thread_info();
// The CPU kernels OpenBLAS picked for this machine at start-up ("Haswell", "SkylakeX", ...).
std::string blas_kernels();
// Whether OpenBLAS's products come out the same, bit for bit, on any number of
// threads: measured true for its SkylakeX and Cooperlake kernels (a training
// step on 1, 2 and 3 threads, tests/training/test_train.cpp); its Haswell kernels
// sum some elements in another order when the threads split a call differently,
// or when the call has another size (autograd/linear_op.cpp cuts products one
// way for every thread count there).
bool blas_results_independent_of_threads(const std::string& core = blas_kernels());

}  // namespace tg
