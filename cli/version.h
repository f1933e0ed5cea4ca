// What `tinygpt --version` prints: the version, the vector extensions this build
// was compiled for and those this CPU has, and the BLAS in use.
#pragma once
#include <string>

namespace tg::cli {

std::string version_text();

}  // namespace tg::cli
