// A property a harness checks beyond "no crash" (two readers agree, decoding
// undoes encoding). When one fails, the input is a finding like a crash:
// abort() makes libFuzzer save it and stop, after this names the property.
#pragma once
#include <cstdio>
#include <cstdlib>

namespace tg::fuzz {

inline void check_property(bool holds, const char* property) {
  if (holds) return;
  std::fprintf(stderr, "fuzz: property does not hold: %s\n", property);
  std::abort();
}

}  // namespace tg::fuzz
