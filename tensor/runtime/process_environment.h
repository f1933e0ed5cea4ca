// Settings the OpenMP runtime and OpenBLAS read from the environment once, when
// the program is loaded, before main() runs: too early for a flag or a
// function call to change them. tinygpt chooses them for the machine and, when
// the user has not set them, starts itself again with them (exec, same process):
//
//   GOMP_SPINCOUNT=500      how long an idle OpenMP thread spins before it sleeps,
//                           set only where the thread count cannot follow the
//                           load (tensor/runtime/thread_governor.h: TINYGPT_THREADS=fixed).
//                           libgomp's default spins 300,000 times: beside one other busy process
//                           on 2 cores, the spinning threads take the cores from
//                           the one doing the work and a training step takes
//                           several times as long. Sleeping at once
//                           (OMP_WAIT_POLICY=PASSIVE) behaves there but slows
//                           small models on an idle machine. 500 spins
//                           (microseconds) is between the two: slower under
//                           load, and idle a step still pays for the wake-ups
//                           (docs/performance.md has the figures). Where the
//                           governor runs, it takes one thread away under load
//                           instead, and libgomp's default spin keeps the idle
//                           speed (bench/run_thread_policy.sh has the figures).
//   OPENBLAS_CORETYPE=...   OpenBLAS picks its kernels by CPU model, and not
//                           always the fastest: on a CPU it does not know (Debian's
//                           0.3.21 on AMD Zen 5) it falls back to AVX2 kernels, much
//                           slower there than its AVX-512 ones; on Zen 4, which runs
//                           AVX-512 on 256-bit units, it picks the AVX-512 ones, and
//                           its AVX2 kernels for Zen are faster there
//                           (preferred_blas_kernels; docs/performance.md has the
//                           figures). Set unless the user set it: then theirs is
//                           kept, and the info line says what tinygpt would choose.
//
// A wait policy the user set (OMP_WAIT_POLICY or GOMP_SPINCOUNT) is kept.
// TINYGPT_ENVIRONMENT marks the second start (its value lists what was set);
// setting it to "keep" beforehand turns the whole mechanism off.
#pragma once
#include <optional>
#include <string>

namespace tg {

// The OpenBLAS kernels tinygpt asks for on this CPU, and why; none on a CPU
// without AVX-512, where the library's own pick is the fastest it has.
struct BlasKernelChoice {
  std::string core;    // an OPENBLAS_CORETYPE value: "Zen", "Cooperlake", "SkylakeX"
  std::string reason;  // for the info line
};
std::optional<BlasKernelChoice> preferred_blas_kernels();

// Call first thing in main(). Returns when nothing needs changing (or the
// exec failed, which only loses the tuning); otherwise does not return.
void tune_process_environment(char** argv);

// What the settings are and who chose them, for the "threads:" line: "tinygpt
// kernels AVX-512; OpenBLAS kernels Zen (chosen by tinygpt over the library's
// Cooperlake: Zen 4 runs ...); idle threads spin 500 times, then sleep (set by
// tinygpt)". The first is tensor/runtime/isa.h's choice.
std::string process_environment_info();

}  // namespace tg
