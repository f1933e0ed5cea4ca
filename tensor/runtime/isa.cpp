#include "tinygpt/tensor/runtime/isa.h"

#include <cpuid.h>

#include <cstdlib>
#include <string>

#include "tinygpt/tensor/error.h"

namespace tg {

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

namespace {

bool cpuid_says_avx512_bf16() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  // __get_cpuid_count fails on a CPU whose highest leaf is below 7. A CPU that
  // knows leaf 7 but not its sub-leaf 1 answers zeros there, so bit 5 is clear.
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) return false;
  constexpr unsigned kAvx512Bf16 = 1u << 5;
  // cpu_has_avx512() also tells that the OS saves the 512-bit registers (XCR0).
  return (eax & kAvx512Bf16) != 0 && cpu_has_avx512();
}

}  // namespace

bool cpu_has_avx512_bf16() {
  // Asked once: CPUID is slow, and in a virtual machine it traps to the host.
  static const bool has = cpuid_says_avx512_bf16();
  return has;
}

bool cpu_has_avx512_vnni() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512vnni") && cpu_has_avx512();
}

namespace {

Isa choose_isa() {
  const char* asked = std::getenv("TINYGPT_ISA");
  const std::string choice = asked ? asked : "";
  if (choice.empty()) return cpu_has_avx512() ? Isa::avx512 : Isa::avx2;
  if (choice == "avx2") return Isa::avx2;
  check(choice == "avx512", "TINYGPT_ISA must be avx2 or avx512, got '", choice, "'");
  check(cpu_has_avx512(), "TINYGPT_ISA=avx512, but this CPU lacks AVX-512 (F, BW, VL and DQ)");
  return Isa::avx512;
}

}  // namespace

Isa active_isa() {
  static const Isa isa = choose_isa();
  return isa;
}

const char* isa_name(Isa isa) { return isa == Isa::avx512 ? "AVX-512" : "AVX2"; }

}  // namespace tg
