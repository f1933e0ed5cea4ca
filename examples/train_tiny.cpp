// Trains a tiny character-level GPT on a text file with tinygpt's C++ API and
// writes its checkpoints (model.safetensors, best.safetensors) to a directory.
//
//   train_tiny input.txt out/   (then: next_token out/best.safetensors "ROMEO:")
#include <iostream>

#include <tinygpt/datasets/data.h>
#include <tinygpt/training/train.h>
#include <tinygpt/datasets/training_data.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: train_tiny TEXT_FILE OUT_DIR\n";
    return 2;
  }
  try {
    tg::TrainingData data = tg::char_level_data(tg::read_text_file(argv[1]));  // its characters are the vocabulary
    tg::GPTConfig config = tg::GPTConfig::preset_named("cpu-small", 1);
    config.n_layer = 2, config.n_head = 2, config.n_embd = 32, config.block_size = 32, config.batch_size = 8;
    tg::TrainSettings settings;
    settings.iters = 60, settings.warmup = 10, settings.eval_interval = 30, settings.eval_iters = 4;
    auto run = tg::TrainingRun::start(std::move(data), config, settings);  // vocab_size comes from the data
    const tg::TrainResult result = run->train({.out_dir = argv[2]}, std::cerr);
    std::cout << "trained " << result.steps << " steps, best val loss " << result.best_val_loss << "\n";
  } catch (const std::exception& error) {
    std::cerr << "train_tiny: " << error.what() << "\n";
    return 1;
  }
}
