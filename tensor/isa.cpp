#include "tensor/isa.h"

#include <cstdlib>
#include <string>

#include "tensor/error.h"

namespace tg {

bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
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
