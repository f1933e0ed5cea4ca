// Shared by the training, checkpoint and generation tests: a tiny corpus, a tiny
// config and a scratch directory that cleans up after itself.
#pragma once
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

#include "tinygpt/models/gpt_config.h"
#include "tinygpt/training/train.h"
#include "tinygpt/training/train_settings.h"
#include "tests/models/tiny_gpt_config.h"

namespace tg::testing {

// A few hundred characters of text with a small vocabulary, repeated: enough
// tokens for many windows in both splits.
inline std::string tiny_corpus() {
  std::string text;
  for (int repeat = 0; repeat < 40; ++repeat) {
    text += "To be, or not to be, that is the question:\nWhether 'tis nobler in the mind to suffer\n";
  }
  return text;
}

// 2 layers, 2 heads, 16 channels, context 8, batch 3: a training step takes well under a millisecond.
inline GPTConfig tiny_config(PositionalEncoding positional = PositionalEncoding::Learned, double dropout = 0.0) {
  GPTConfig config = tiny_gpt_config({.vocab_size = 1, .n_embd = 16, .positional = positional});
  config.batch_size = 3;
  config.dropout = dropout;
  return config;
}

inline TrainSettings tiny_settings(int64_t iters = 12) {
  TrainSettings settings;
  settings.iters = iters;
  settings.warmup = 3;
  settings.lr = 3e-3;
  settings.min_lr = 3e-4;
  settings.eval_interval = 4;
  settings.eval_iters = 2;
  settings.seed = 7;
  return settings;
}

// Checkpoints into `dir`, no metrics file; stop_after as in TrainOutputs.
inline TrainOutputs outputs_in(const std::string& dir, int64_t stop_after = -1) {
  TrainOutputs outputs;
  outputs.out_dir = dir;
  outputs.stop_after = stop_after;
  return outputs;
}

// A fresh empty directory under the system's temporary directory, removed at the end of the scope.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("tinygpt-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace tg::testing
