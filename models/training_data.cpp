#include "models/training_data.h"

#include "tensor/error.h"
#include "tokenizer/errors.h"

namespace tg {

TrainingData char_level_data(const std::string& text) {
  try {
    return tokenized_text_data(text, tokenizer::TextTokenizer(tokenizer::CharTokenizer::from_corpus(text)));
  } catch (const tokenizer::TokenizerError& error) {
    fail("cannot build a character vocabulary from the text: ", error.what());
  }
}

TrainingData tokenized_text_data(const std::string& text, tokenizer::TextTokenizer tokenizer) {
  std::vector<int64_t> ids;
  try {
    ids = tokenizer.encode(text);
  } catch (const tokenizer::TokenizerError& error) {
    fail("cannot encode the text with the ", tokenizer.kind(), " tokenizer: ", error.what());
  }
  const size_t count = ids.size();
  TokenSplits splits = split_by_position(ids);
  return TrainingData{std::move(tokenizer), std::move(splits),
                      std::to_string(count) + " tokens, encoded in memory"};
}

}  // namespace tg

namespace tg {
TrainingData prepared_data(const std::string& directory) {
  fail("train: --data ", directory, ": prepared datasets are not wired in yet");  // replaced when models/token_dataset lands
}
}  // namespace tg
