#include "cli/output_paths.h"

#include "cli/usage_errors.h"

namespace tg::cli {

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
  std::error_code error;
  return std::filesystem::exists(a, error) && std::filesystem::exists(b, error) &&
         std::filesystem::equivalent(a, b, error);
}

void check_output_is_no_input(const std::string& output_flag, const std::filesystem::path& output,
                              const std::vector<std::pair<std::string, std::filesystem::path>>& inputs) {
  for (const auto& [input_flag, input] : inputs) {
    if (input.empty()) continue;
    const bool same = output.lexically_normal() == input.lexically_normal() || same_file(output, input);
    check_usage(!same, output_flag, " ", output.string(), " is the ", input_flag, " file; writing it would destroy that");
  }
}

}  // namespace tg::cli
