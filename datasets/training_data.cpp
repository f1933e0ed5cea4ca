#include "tinygpt/datasets/training_data.h"

#include "tinygpt/datasets/token_dataset.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg {

namespace {

// A split of a prepared dataset: its token file, read a window at a time.
class FileTokens final : public TokenSource {
 public:
  explicit FileTokens(TokenFile file) : file_(std::move(file)) {}
  int64_t size() const override { return file_.size(); }
  void copy_window(int64_t start, int64_t count, int64_t* out) const override {
    file_.copy_window(start, count, out);  // checks every id against the vocabulary, naming the file
  }

 private:
  TokenFile file_;
};

}  // namespace

TrainingData char_level_data(const std::string& text, std::vector<std::string> special_tokens) {
  try {
    return tokenized_text_data(
        text, tokenizer::TextTokenizer(tokenizer::CharTokenizer::from_text(text, std::move(special_tokens))));
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
                      std::to_string(count) + " tokens, encoded in memory", std::nullopt, std::nullopt};
}

TrainingData prepared_data(const std::string& directory) {
  PreparedDataset dataset = open_prepared_dataset(directory);
  const int64_t tokens = dataset.train.size() + dataset.val.size();
  std::string description = directory + " (prepared: " + std::to_string(tokens) + " tokens as " +
                            token_dtype_name(dataset.meta.dtype) + ", " + dataset.tokenizer.kind() +
                            " tokenizer of " + std::to_string(dataset.tokenizer.vocab_size()) + " tokens, read a window at a time)";
  DataSource source = prepared_source(directory, tokens, dataset.meta.train.xxh3, dataset.meta.val.xxh3);
  return TrainingData{std::move(dataset.tokenizer),
                      TokenSplits{TokenSplit("train", std::make_shared<FileTokens>(std::move(dataset.train))),
                                  TokenSplit("val", std::make_shared<FileTokens>(std::move(dataset.val)))},
                      std::move(description), std::move(source), std::nullopt};
}

}  // namespace tg
