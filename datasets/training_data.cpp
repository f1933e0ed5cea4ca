#include "tinygpt/datasets/training_data.h"

#include "tinygpt/datasets/conversation_dataset.h"
#include "tinygpt/datasets/file_hash.h"
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
  TokenSplits splits{TokenSplit("train", std::make_shared<FileTokens>(std::move(dataset.train))),
                     TokenSplit("val", std::make_shared<FileTokens>(std::move(dataset.val)))};
  std::optional<ConversationSplits> conversations;
  uint64_t train_hash = dataset.meta.train.xxh3, val_hash = dataset.meta.val.xxh3;
  if (const std::optional<ConversationsMeta>& meta = dataset.meta.conversations) {
    // The same ids with another mask are other data: the masks' hashes go into the source's.
    conversations = ConversationSplits{open_conversation_split(directory, meta->train, splits.train),
                                       open_conversation_split(directory, meta->val, splits.val)};
    const auto with_mask = [](uint64_t ids, uint64_t mask) {
      const uint64_t both[2] = {ids, mask};
      Xxh3Hasher hasher;
      hasher.update(both, sizeof both);
      return hasher.digest();
    };
    train_hash = with_mask(train_hash, meta->train.mask_xxh3);
    val_hash = with_mask(val_hash, meta->val.mask_xxh3);
    description = directory + " (prepared conversations: train " + std::to_string(meta->train.count) + ", val " +
                  std::to_string(meta->val.count) + ", " + std::to_string(tokens) + " tokens as " +
                  token_dtype_name(dataset.meta.dtype) + ", " + dataset.tokenizer.kind() + " tokenizer of " +
                  std::to_string(dataset.tokenizer.vocab_size()) + " tokens; the loss on the assistant's tokens)";
  }
  DataSource source = prepared_source(directory, tokens, train_hash, val_hash);
  return TrainingData{std::move(dataset.tokenizer), std::move(splits), std::move(description), std::move(source),
                      std::move(conversations)};
}

}  // namespace tg
