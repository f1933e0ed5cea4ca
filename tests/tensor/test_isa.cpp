// tensor/runtime/isa.h's CPU queries against what the kernel reports in /proc/cpuinfo.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "tinygpt/tensor/runtime/isa.h"

using namespace tg;

namespace {

// The "flags" line of the first processor in /proc/cpuinfo; empty where there is none.
std::set<std::string> cpuinfo_flags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string flag; words >> flag;) flags.insert(flag);
    return flags;
  }
  return {};
}

}  // namespace

TEST_CASE("cpu_has_avx512 and cpu_has_avx512_bf16 agree with /proc/cpuinfo") {
  const std::set<std::string> flags = cpuinfo_flags();
  if (flags.empty()) {
    MESSAGE("no /proc/cpuinfo flags here: nothing to compare with");
    return;
  }
  const bool avx512 =
      flags.count("avx512f") && flags.count("avx512bw") && flags.count("avx512vl") && flags.count("avx512dq");
  CHECK(cpu_has_avx512() == avx512);
  CHECK(cpu_has_avx512_bf16() == (avx512 && flags.count("avx512_bf16") > 0));
}
