// No command writes over what it reads: an output that names an input (the same
// path, or the same file through a link) is refused before anything is written.
// `tinygpt plot --metrics run.jsonl --out run.jsonl` would otherwise replace the
// log by its own picture, as `train --log corpus.txt` once replaced the corpus.
#pragma once
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace tg::cli {

// Whether two paths name one existing file (or directory): the same inode.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// A usage error (exit 2) when `output` is one of `inputs`, each given as {flag, path}:
//   "--out run/metrics.jsonl is the --metrics file; writing it would destroy that"
void check_output_is_no_input(const std::string& output_flag, const std::filesystem::path& output,
                              const std::vector<std::pair<std::string, std::filesystem::path>>& inputs);

}  // namespace tg::cli
