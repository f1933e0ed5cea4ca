// The names of an enum's values, as configs and flags write them: one table per
// enum, read both ways.
#pragma once
#include <cstddef>
#include <string>

#include "tinygpt/tensor/error.h"

namespace tg {

template <class Enum>
struct Named {
  Enum value;
  const char* name;
};

template <class Enum, size_t N>
const char* name_in(const Named<Enum> (&names)[N], Enum value) {
  for (const Named<Enum>& entry : names)
    if (entry.value == value) return entry.name;
  return "?";
}

// The value called `name`; an unknown name throws "<context>unknown <what> '<name>' (known: ...)".
template <class Enum, size_t N>
Enum value_in(const Named<Enum> (&names)[N], const std::string& name, const char* what, const char* context = "") {
  std::string known;
  for (const Named<Enum>& entry : names) {
    if (name == entry.name) return entry.value;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  fail(context, "unknown ", what, " '", name, "' (known: ", known, ")");
}

}  // namespace tg
