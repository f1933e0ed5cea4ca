// Loads a tinygpt checkpoint and prints the model's next-token distribution
// after a prompt: the five likeliest tokens and their probabilities, one line
// each, a token quoted with its control characters escaped ('\n', '\t').
//
//   next_token out/shakespeare "ROMEO:"        (a run directory, a checkpoint file or a GPT-2 DIR)
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <numeric>
#include <vector>

#include <tinygpt/tensor/softmax.h>
#include <tinygpt/tinygpt.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: next_token MODEL PROMPT\n";
    return 2;
  }
  try {
    const tg::LoadedModel loaded = tg::load_model(argv[1]);  // a checkpoint, a run's directory or a GPT-2 DIR
    tg::GPT& model = *loaded.model;
    const tg::tokenizer::TextTokenizer& tokenizer = loaded.tokenizer;

    std::vector<int64_t> ids = tokenizer.encode(argv[2]);  // (T,)
    const int64_t context = std::min<int64_t>(static_cast<int64_t>(ids.size()), model.config().block_size);
    ids.erase(ids.begin(), ids.end() - context);
    tg::NoGradGuard no_grad;
    const tg::Tensor logits = model.forward(tg::from_vector(ids, {1, context}), tg::GPT::LogitPositions::Last);  // (1, 1, V)
    const tg::Tensor probabilities = tg::raw::softmax(logits, -1);  // (1, 1, V)
    const float* p = probabilities.data<float>();

    std::vector<int64_t> order(static_cast<size_t>(model.config().vocab_size));
    std::iota(order.begin(), order.end(), 0);
    const int64_t shown = std::min<int64_t>(5, model.config().vocab_size);  // a vocabulary may have fewer than 5
    std::partial_sort(order.begin(), order.begin() + shown, order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b]; });
    for (int64_t rank = 0; rank < shown; ++rank) {
      const int64_t id = order[static_cast<size_t>(rank)];
      // display() writes a newline token as \n: printed raw, it would break the table. The quotes show a space.
      std::printf("%5.1f%%  id %-6lld '%s'\n", 100.0 * p[id], static_cast<long long>(id), tokenizer.display(id).c_str());
    }
  } catch (const std::exception& error) {
    std::cerr << "next_token: " << error.what() << "\n";
    return 1;
  }
}
