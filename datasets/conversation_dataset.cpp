#include "tinygpt/datasets/conversation_dataset.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <filesystem>
#include <set>

#include "tinygpt/datasets/assistant_spans.h"
#include "tinygpt/datasets/chat_format.h"
#include "tinygpt/datasets/conversation_data.h"
#include "tinygpt/datasets/conversation_file.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/datasets/token_file_writer.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/hf_tokenizer.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg {

namespace {

namespace fs = std::filesystem;
constexpr const char* kWho = "prepare";
static_assert(std::endian::native == std::endian::little, "the starts files are written as the CPU holds them");

// A split's starts and mask as they are written, hashed on the way.
class SplitConversationWriter {
 public:
  SplitConversationWriter(const fs::path& out, const char* starts, const char* mask)
      : starts_(out / starts), mask_(out / mask), starts_file_((out / starts).string(), kWho),
        mask_file_((out / mask).string(), kWho) {
    append_start();  // 0
  }
  void add(const MaskedIds& conversation) {
    mask_file_.write(conversation.trained.data(), conversation.trained.size());
    mask_hash_.update(conversation.trained.data(), conversation.trained.size());
    tokens_ += static_cast<int64_t>(conversation.ids.size());
    append_start();
    ++count_;
  }
  int64_t tokens() const { return tokens_; }
  void commit() {
    starts_file_.commit();
    mask_file_.commit();
  }
  ConversationSplitMeta meta() const {
    return {starts_.filename().string(), mask_.filename().string(), count_, starts_hash_.digest(), mask_hash_.digest()};
  }

 private:
  void append_start() {
    starts_file_.write(&tokens_, sizeof tokens_);
    starts_hash_.update(&tokens_, sizeof tokens_);
  }
  fs::path starts_, mask_;
  AtomicFile starts_file_, mask_file_;
  Xxh3Hasher starts_hash_, mask_hash_;
  int64_t tokens_ = 0, count_ = 0;
};

// The model's tokenizer, or for char-level the characters of every rendered conversation (a pass of its own).
tokenizer::TextTokenizer dataset_tokenizer(const PrepareConversationsOptions& options, std::string_view text,
                                           const std::string& where) {
  if (options.tokenizer != DatasetTokenizer::char_level) {
    try {
      return tokenizer::load_tokenizer_directory(options.vocabulary_directory);
    } catch (const tokenizer::TokenizerError& error) {
      fail(kWho, ": ", error.what());
    }
  }
  const ChatFormat format = chatml_format();
  const tokenizer::jinja::Template chat(format.template_text);
  std::set<char32_t> seen;
  std::string corpus;  // each character once
  for_each_conversation(text, where, [&](Conversation&& conversation) {
    std::string rendered =
        render_for_training(chat, format, conversation.messages, where + " line " + std::to_string(conversation.line)).text;
    for (const char* marker : {kChatmlStart, kChatmlEnd})  // one token each (chat_vocabulary), not characters
      for (size_t found = rendered.find(marker); found != std::string::npos; found = rendered.find(marker, found))
        rendered.erase(found, std::string_view(marker).size());
    for (size_t at = 0; at < rendered.size();) {
      const tokenizer::Utf8Char character = tokenizer::decode_utf8_char(rendered, at);
      if (seen.insert(character.code_point).second) tokenizer::append_utf8(corpus, character.code_point);
      at += character.length;
    }
  });
  return chat_vocabulary(corpus);
}

// How meta.json names the tokenizer, and its files written into the dataset (from the texts it carries).
DatasetTokenizerMeta write_tokenizer(const tokenizer::TextTokenizer& tokenizer, DatasetTokenizer kind,
                                     const fs::path& out) {
  const nlohmann::json json = tokenizer.to_json();
  if (const auto* characters = tokenizer.as_char()) return {"char", characters->serialize(), "", "", "", "", characters->special_tokens()};
  if (tokenizer.as_hf()) {
    DatasetTokenizerMeta meta{"hf", "", "", "", tokenizer::hf_tokenizer_file_name, ""};
    for (const char* name : {tokenizer::hf_tokenizer_file_name, tokenizer::hf_tokenizer_config_file_name}) {
      if (!json.contains(name)) continue;
      write_file_atomically((out / name).string(), json.at(name).get<std::string>(), kWho);
      if (std::string_view(name) == tokenizer::hf_tokenizer_config_file_name) meta.tokenizer_config_file = name;
    }
    return meta;
  }
  for (const char* name : {tokenizer::encoder_file_name, tokenizer::merges_file_name})
    write_file_atomically((out / name).string(), json.at(name).get<std::string>(), kWho);
  return {kind == DatasetTokenizer::gpt2 ? "gpt2" : "bpe", "", tokenizer::encoder_file_name, tokenizer::merges_file_name,
          "", ""};
}

// A file of the dataset read whole, its size and hash checked.
std::string checked_file(const fs::path& path, size_t bytes, uint64_t xxh3) {
  check(fs::is_regular_file(path), "'", path.string(), "' is missing: the conversations' file of a prepared dataset ",
        "(run tinygpt prepare --chat again)");
  const std::string content = read_text_file(path.string());
  check(content.size() == bytes, "'", path.string(), "' has ", content.size(), " bytes but ", kTokenDatasetMetaFile,
        " says ", bytes, ": the file is truncated or not the one prepare wrote");
  Xxh3Hasher hasher;
  hasher.update(content.data(), content.size());
  check(hasher.digest() == xxh3, "'", path.string(), "' is damaged: its XXH3 hash is ", xxh3_hex(hasher.digest()),
        " but ", kTokenDatasetMetaFile, " says ", xxh3_hex(xxh3));
  return content;
}

}  // namespace

PrepareSummary prepare_conversation_dataset(const PrepareConversationsOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  check(options.val_fraction >= 0 && options.val_fraction < 1, kWho, ": the validation fraction ",
        options.val_fraction, " must be in [0, 1)");
  const std::string where = std::string(kWho) + ": --chat " + options.source;
  const std::string text = read_text_file(options.source);
  const int64_t count = for_each_conversation(text, where, [](Conversation&&) {});  // every line checked first
  const int64_t held_out =
      std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(count) * options.val_fraction));
  check(count > held_out, where, ": holds ", count, " conversation", count == 1 ? "" : "s", "; at least ", held_out + 1,
        " are needed to hold ", held_out, " out for validation");
  const fs::path out(options.out_directory);
  std::error_code error;
  fs::create_directories(out, error);
  check(!error && fs::is_directory(out), kWho, ": cannot use '", options.out_directory, "' as the output directory");

  const tokenizer::TextTokenizer tokenizer = dataset_tokenizer(options, text, where);
  const ChatFormat format = options.tokenizer == DatasetTokenizer::char_level ? chatml_format()
                                                                                 : chat_format_for(tokenizer, {});
  const tokenizer::jinja::Template chat(format.template_text);
  PrepareSummary summary;
  TokenDatasetMeta& meta = summary.meta;
  meta.vocab_size = tokenizer.vocab_size();
  meta.dtype = token_dtype_for_vocab_size(meta.vocab_size);
  meta.sources = {{options.source, static_cast<int64_t>(text.size())}};
  summary.source_bytes = static_cast<int64_t>(text.size());

  SplitTokenWriter writer(out.string(), meta.dtype, kWho);
  SplitConversationWriter train(out, kTrainStartsFile, kTrainMaskFile), val(out, kValStartsFile, kValMaskFile);
  int64_t index = 0;
  std::vector<tokenizer::TokenId> narrow;
  for_each_conversation(text, where, [&](Conversation&& conversation) {
    const std::string here = where + " line " + std::to_string(conversation.line);
    const MaskedIds masked = encode_masked(tokenizer, render_for_training(chat, format, conversation.messages, here), here);
    narrow.assign(masked.ids.begin(), masked.ids.end());
    writer.append(narrow);
    (index++ < count - held_out ? train : val).add(masked);
  });
  writer.split(train.tokens());
  meta.train = writer.train();
  meta.val = writer.val();
  meta.conversations = ConversationsMeta{train.meta(), val.meta()};

  // From here on the directory is not a dataset until the new meta.json is in place.
  const std::string meta_path = (out / kTokenDatasetMetaFile).string();
  fs::remove(meta_path);
  writer.commit();
  train.commit();
  val.commit();
  meta.tokenizer = write_tokenizer(tokenizer, options.tokenizer, out);
  write_file_atomically(meta_path, meta.to_json().dump(2) + "\n", kWho);
  if (options.progress)
    *options.progress << "prepare: " << count << " conversations rendered with " << format.template_source << ": train "
                      << count - held_out << ", val " << held_out << " (the last)\n";
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

ConversationSplit open_conversation_split(const std::string& directory, const ConversationSplitMeta& meta,
                                          TokenSplit tokens) {
  const fs::path root(directory);
  const std::string starts_text =
      checked_file(root / meta.starts_file, static_cast<size_t>(meta.count + 1) * sizeof(int64_t), meta.starts_xxh3);
  const std::string mask_text = checked_file(root / meta.mask_file, static_cast<size_t>(tokens.size()), meta.mask_xxh3);
  std::vector<int64_t> starts(static_cast<size_t>(meta.count + 1));
  std::copy_n(starts_text.data(), starts_text.size(), reinterpret_cast<char*>(starts.data()));
  for (size_t i = 1; i < starts.size(); ++i)
    check(starts[i] >= starts[i - 1] + 2 && starts[i] <= tokens.size(), "'", (root / meta.starts_file).string(),
          "': conversation ", i - 1, " runs from id ", starts[i - 1], " to ", starts[i], " of ", tokens.size(),
          ": not the file prepare wrote");
  check(starts.front() == 0 && starts.back() == tokens.size(), "'", (root / meta.starts_file).string(),
        "' does not run from 0 to the ", tokens.size(), " ids of ", tokens.name());
  std::vector<uint8_t> trained(mask_text.begin(), mask_text.end());
  for (const uint8_t flag : trained)
    check(flag <= 1, "'", (root / meta.mask_file).string(), "' holds a byte ", int(flag), "; a mask holds 0 and 1");
  return ConversationSplit(std::move(tokens), std::move(starts), std::move(trained));
}

}  // namespace tg
