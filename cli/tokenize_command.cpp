// tinygpt tokenize: GPT-2 (or Hugging Face tokenizer.json) tokens of a file or
// stdin, or its ids decoded to text.
//
//   tinygpt tokenize --vocab DIR < text      ids, space-separated, on one line
//   tinygpt tokenize FILE                    the same for a file
//   tinygpt tokenize --count < text          the number of tokens only
//   tinygpt tokenize --show < text           one token per line: id, then the
//                                            token as GPT-2 writes it ('Ġworld')
//   tinygpt tokenize --decode < ids          the text of whitespace-separated ids
//   tinygpt tokenize --vocab DIR --chat conversation.json [--show]
//                                            the ids of a conversation ({"messages": [...]})
//                                            rendered with DIR's chat template and the
//                                            generation prompt, as Hugging Face's
//                                            apply_chat_template(..., tokenize=True,
//                                            add_generation_prompt=True); --show prints the text
//
// --vocab DIR (--gpt2 DIR is the same) holds encoder.json + vocab.bpe or
// vocab.json + merges.txt, or a Hugging Face tokenizer.json (Llama, Qwen,
// SmolLM2; tokenizer.json wins when both are there); without it,
// ../shared/data/gpt2 is used if it exists. --special: GPT-2 encodes
// "<|endoftext|>" as its id; a tokenizer.json always recognises its added
// tokens, and --special adds its post-processor's ("<s>" first for Llama 2).
#include <iostream>
#include <iterator>
#include <memory>
#include <string>

#include "tinygpt/datasets/chat_format.h"
#include "cli/commands.h"
#include "cli/data_paths.h"
#include "cli/token_ids.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/tokenizer/gpt2_tokenizer.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg::cli {

namespace {

struct TokenizeOptions {
  std::string gpt2_directory;
  std::string input_file;  // empty: standard input
  bool count = false;
  bool decode = false;
  bool show = false;
  bool special = false;
  std::string chat_file;
};

std::string read_stdin() {
  std::ios::sync_with_stdio(false);
  return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
}

// Python-style quoting of a token's text, as in ['Hello', 'Ġworld'].
std::string quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// The ids space-separated on one line, or only their number.
void print_ids(const std::vector<tokenizer::TokenId>& ids, bool count) {
  if (count) {
    std::cout << ids.size() << "\n";
    return;
  }
  std::string line;
  line.reserve(ids.size() * 6);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ' ';
    line += std::to_string(ids[i]);
  }
  std::cout << line << "\n";
}

void run_tokenize(const TokenizeOptions& options) {
  const std::string directory =
      options.gpt2_directory.empty() ? default_gpt2_vocab_dir("tokenize") : options.gpt2_directory;
  const tokenizer::TextTokenizer loaded = tokenizer::load_tokenizer_directory(directory);
  const tokenizer::Gpt2Tokenizer* gpt2 = loaded.as_bpe();
  const tokenizer::HfTokenizer* hf = loaded.as_hf();
  if (!options.chat_file.empty()) {
    const ChatFormat format = chat_format_for(loaded, {});
    const RenderedConversation rendered =
        render_conversation(format, loaded, read_conversation_file(options.chat_file, "tokenize"), "tokenize");
    if (options.show) {
      std::cout << rendered.text << std::flush;
      return;
    }
    print_ids(std::vector<tokenizer::TokenId>(rendered.ids.begin(), rendered.ids.end()), options.count);
    return;
  }
  const std::string input = options.input_file.empty() ? read_stdin() : read_text_file(options.input_file);

  if (options.decode) {
    const std::vector<int64_t> ids = parse_token_ids(input, "tokenize --decode");
    std::cout << loaded.decode(ids) << std::flush;
    return;
  }
  const auto specials = options.special ? tokenizer::SpecialTokens::recognised : tokenizer::SpecialTokens::as_text;
  const std::vector<tokenizer::TokenId> ids = hf ? hf->encode(input, options.special) : gpt2->encode(input, specials);
  if (options.show) {
    for (tokenizer::TokenId id : ids)
      std::cout << id << "\t" << quoted(hf ? hf->token_text(id) : gpt2->token_text(id)) << "\n";
    return;
  }
  print_ids(ids, options.count);
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto options = std::make_shared<TokenizeOptions>();
  CLI::App* command =
      app.add_subcommand("tokenize", "GPT-2 byte-level BPE or a Hugging Face tokenizer.json: encode stdin to "
                                     "token ids, or decode ids to text");
  command->add_option("--vocab,--gpt2", options->gpt2_directory,
                      "Folder with GPT-2's encoder.json and vocab.bpe, or vocab.json and merges.txt, or a Hugging "
                      "Face tokenizer.json (default: $TINYGPT_DATA_DIR/gpt2, else ../shared/data/gpt2 beside the "
                      "checkout)")
      ->type_name("DIR");
  command->add_option("file", options->input_file, "Text (or with --decode, ids) to read instead of standard input")
      ->type_name("FILE");
  CLI::Option* count = command->add_flag("--count", options->count, "Print only the number of tokens");
  CLI::Option* show = command->add_flag("--show", options->show, "Print each token beside its id, one per line");
  CLI::Option* decode = command->add_flag("--decode", options->decode, "Read ids from stdin and print their text");
  command->add_flag("--special", options->special,
                    "GPT-2: encode <|endoftext|> as its special id, not as text; tokenizer.json: add the "
                    "post-processor's special tokens (Llama 2's <s>)");
  CLI::Option* chat = command->add_option("--chat", options->chat_file,
                                          "A conversation ({\"messages\": [{\"role\", \"content\"}, ...]}): print the ids "
                                          "of it rendered with the chat template and the generation prompt (--show: the text)")
                          ->type_name("FILE.json");
  chat->excludes(decode);
  count->excludes(show)->excludes(decode);
  show->excludes(decode);
  command->callback([options] { run_tokenize(*options); });
}

}  // namespace tg::cli
