// One knob for every thread: OpenMP's team, which the OpenMP build of OpenBLAS
// shares, so BLAS calls and our kernels never oversubscribe the cores.
#pragma once
#include <cstdint>
#include <string>

namespace tg {

// Below this many elements a kernel runs on the calling thread: waking the team
// costs more than it saves.
inline constexpr int64_t kParallelThreshold = 32768;

void set_num_threads(int threads);
int num_threads();
// "2 OpenMP threads; OpenBLAS 0.3.21 ... (OpenMP build), 2 threads; OpenBLAS kernels ...; idle
// threads spin ..." for start-up logs (the last two: tensor/process_environment.h).
std::string thread_info();
// The CPU kernels OpenBLAS picked for this machine at start-up ("Haswell", "SkylakeX", ...).
std::string blas_kernels();

}  // namespace tg
