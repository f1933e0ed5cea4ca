// Shared helpers of the Hugging Face layout tests (test_hf_gpt2.cpp,
// test_hf_llama.cpp): JSON files read and written, and scratch directories.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace tg::testing {

inline nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

// A fresh directory per use, removed afterwards.
struct ScratchDirectory {
  std::filesystem::path path;
  explicit ScratchDirectory(const std::string& prefix = "tinygpt_hf_") {
    static int counter = 0;
    path = std::filesystem::temp_directory_path() /
           (prefix + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchDirectory() { std::filesystem::remove_all(path); }
};

}  // namespace tg::testing
