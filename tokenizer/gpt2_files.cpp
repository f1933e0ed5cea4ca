// Reading and writing encoder.json + vocab.bpe, with the checks listed in
// gpt2_files.h. nlohmann/json parses the JSON; vocab.bpe is parsed by hand.
#include "tinygpt/tokenizer/gpt2_files.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <unordered_map>

#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg::tokenizer {

namespace fs = std::filesystem;

namespace {

// GPT-2's encoder.json is 1 MB and its vocab.bpe 0.5 MB; vocabularies of a few hundred thousand
// tokens stay far below this.
constexpr std::uintmax_t kMaxVocabularyFileBytes = std::uintmax_t{256} << 20;

std::string read_whole_file(const fs::path& path) {
  // Sized first: a pipe or a device (/dev/zero) could be read without end.
  std::error_code error;
  if (!fs::is_regular_file(path, error))
    throw TokenizerFileError(path.string() + (fs::exists(path, error) ? ": not a regular file (a pipe or a device?)"
                                                                      : ": cannot open the file"));
  const std::uintmax_t bytes = fs::file_size(path, error);
  if (error) throw TokenizerFileError(path.string() + ": cannot read its size: " + error.message());
  if (bytes > kMaxVocabularyFileBytes)
    throw TokenizerFileError(path.string() + ": " + std::to_string(bytes >> 20) +
                             " MB, more than any vocabulary file needs (256 MB at most)");
  std::ifstream file(path, std::ios::binary);
  if (!file) throw TokenizerFileError(path.string() + ": cannot open the file");
  std::string contents(static_cast<size_t>(bytes), '\0');
  file.read(contents.data(), static_cast<std::streamsize>(bytes));
  contents.resize(static_cast<size_t>(file.gcount()));  // a file cut shorter while it was read
  return contents;
}

// Special tokens are written as "<|name|>" and are not in the byte alphabet.
bool looks_special(std::string_view text) {
  return text.size() > 4 && text.starts_with("<|") && text.ends_with("|>");
}

// A line, shortened and made printable, for quoting in a message.
std::string quote_line(std::string_view line) {
  std::string quoted = std::string(line.substr(0, 60));
  for (char& c : quoted) {
    if (static_cast<unsigned char>(c) < 0x20) c = '?';
  }
  return "'" + quoted + (line.size() > 60 ? "...'" : "'");
}

struct EncoderFile {
  std::vector<std::string> tokens;                   // id -> bytes
  std::vector<TokenId> special_ids;
  std::unordered_map<std::string, TokenId> id_of;    // token text -> id
};

EncoderFile parse_encoder(std::string_view text, const std::string& name) {
  const std::string where = name + ": ";
  nlohmann::json json;
  try {
    // The nesting limit of tensor/io/bounded_json.h: printing a value recurses per level, and a
    // file nested 70,000 deep overflowed the stack. Checked here rather than by parse_bounded_json
    // so that the refusal is a TokenizerFileError saying what an encoder.json should be.
    if (json_nests_deeper_than(text, kMaxJsonDepth + 1))
      throw TokenizerFileError(where + "the JSON nests deeper than " + std::to_string(kMaxJsonDepth) +
                               " levels; an encoder.json is one flat object");
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {  // a syntax error, or a number beyond a double (1e400)
    throw TokenizerFileError(where + "not valid JSON (truncated?): " + json_error_text(error));
  }
  if (!json.is_object() || json.empty()) {
    throw TokenizerFileError(where + "expected a JSON object mapping token text to id");
  }

  EncoderFile encoder;
  const std::size_t count = json.size();
  encoder.tokens.resize(count);
  std::vector<bool> seen(count, false);
  for (const auto& [text, value] : json.items()) {
    const std::string token = "token '" + text + "'";
    if (!value.is_number_unsigned()) {
      throw TokenizerFileError(where + token + " has id " + value.dump() + ", expected an integer >= 0");
    }
    const auto id = value.get<std::uint64_t>();
    if (id >= count) {
      throw TokenizerFileError(where + token + " has id " + std::to_string(id) + ", but the " +
                               std::to_string(count) + " ids must be 0.." + std::to_string(count - 1));
    }
    if (seen[id]) throw TokenizerFileError(where + "id " + std::to_string(id) + " is used twice (again by " + token + ")");
    seen[id] = true;
    if (looks_special(text)) {
      encoder.tokens[id] = text;
      encoder.special_ids.push_back(static_cast<TokenId>(id));
    } else {
      std::optional<std::string> bytes = alphabet_text_to_bytes(text);
      if (!bytes || bytes->empty()) {
        throw TokenizerFileError(where + token + " (id " + std::to_string(id) +
                                 ") has a character outside GPT-2's byte alphabet");
      }
      encoder.tokens[id] = std::move(*bytes);
    }
    encoder.id_of.emplace(text, static_cast<TokenId>(id));
  }
  std::sort(encoder.special_ids.begin(), encoder.special_ids.end());
  return encoder;
}

// The merges of vocab.bpe, and the line each came from.
struct MergesFile {
  std::vector<Merge> merges;
  std::vector<std::size_t> line_numbers;
};

MergesFile parse_merges(std::string_view contents, const std::string& name, const EncoderFile& encoder) {
  const std::string where = name + ":";
  if (!contents.empty() && contents.back() != '\n') {
    throw TokenizerFileError(where + " does not end with a newline: the file looks truncated");
  }
  MergesFile file;
  std::size_t line_number = 0;
  for (std::size_t start = 0; start < contents.size();) {
    const std::size_t end = contents.find('\n', start);
    std::string_view line = contents.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line_number == 1 && line.starts_with("#version")) continue;
    const std::string here = where + std::to_string(line_number) + ": ";
    const std::size_t space = line.find(' ');
    if (line.empty() || space == 0 || space == std::string_view::npos || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string_view::npos) {
      throw TokenizerFileError(here + "expected two tokens separated by one space, got " + quote_line(line));
    }
    Merge merge{};
    for (const auto& [part, id] : {std::pair{line.substr(0, space), &merge.left},
                                   std::pair{line.substr(space + 1), &merge.right}}) {
      const auto found = encoder.id_of.find(std::string(part));
      if (found == encoder.id_of.end()) {
        throw TokenizerFileError(here + "'" + std::string(part) + "' is not a token of the encoder file");
      }
      *id = found->second;
    }
    file.merges.push_back(merge);
    file.line_numbers.push_back(line_number);
  }
  if (file.merges.empty()) throw TokenizerFileError(where + " has no merges");
  return file;
}

}  // namespace

BpeVocabulary parse_gpt2_vocabulary(const Gpt2VocabularyTexts& texts, const std::string& encoder_name,
                                    const std::string& merges_name) {
  EncoderFile encoder = parse_encoder(texts.encoder_json, encoder_name);
  MergesFile merges = parse_merges(texts.vocab_bpe, merges_name, encoder);
  try {
    return BpeVocabulary(std::move(encoder.tokens), std::move(merges.merges), std::move(encoder.special_ids));
  } catch (const MergeError& error) {
    throw TokenizerFileError(merges_name + ":" + std::to_string(merges.line_numbers[error.merge_index()]) + ": " +
                             error.what());
  } catch (const TokenizerError& error) {
    throw TokenizerFileError(encoder_name + " with " + fs::path(merges_name).filename().string() + ": " +
                             error.what());
  }
}

BpeVocabulary read_gpt2_vocabulary(const fs::path& encoder_json, const fs::path& vocab_bpe) {
  return parse_gpt2_vocabulary({read_whole_file(encoder_json), read_whole_file(vocab_bpe)}, encoder_json.string(),
                               vocab_bpe.string());
}

bool has_gpt2_vocabulary(const fs::path& directory) {
  return (fs::is_regular_file(directory / encoder_file_name) && fs::is_regular_file(directory / merges_file_name)) ||
         (fs::is_regular_file(directory / hf_encoder_file_name) && fs::is_regular_file(directory / hf_merges_file_name));
}

BpeVocabulary read_gpt2_vocabulary(const fs::path& directory) {
  if (!fs::is_directory(directory)) {
    throw TokenizerFileError(directory.string() + ": not a directory (expected one holding " + encoder_file_name +
                             " and " + merges_file_name + ", or " + hf_encoder_file_name + " and " +
                             hf_merges_file_name + ")");
  }
  const bool openai_names = fs::exists(directory / encoder_file_name) || !fs::exists(directory / hf_encoder_file_name);
  return openai_names ? read_gpt2_vocabulary(directory / encoder_file_name, directory / merges_file_name)
                      : read_gpt2_vocabulary(directory / hf_encoder_file_name, directory / hf_merges_file_name);
}

Gpt2VocabularyTexts gpt2_vocabulary_texts(const BpeVocabulary& vocabulary) {
  const auto text_of = [&](TokenId id) {
    const std::string_view bytes = vocabulary.token_bytes(id);
    return vocabulary.is_special(id) ? std::string(bytes) : bytes_to_alphabet_text(bytes);
  };

  std::string encoder = "{";
  for (TokenId id = 0; id < vocabulary.size(); ++id) {
    // dump(indent -1, ' ', ensure_ascii) escapes as Python's json.dumps does.
    encoder += (id == 0 ? "" : ", ") + nlohmann::json(text_of(id)).dump(-1, ' ', true) + ": " + std::to_string(id);
  }
  encoder += "}";

  std::string merges = "#version: 0.2\n";
  for (const Merge& merge : vocabulary.merges()) merges += text_of(merge.left) + " " + text_of(merge.right) + "\n";
  return {std::move(encoder), std::move(merges)};
}

void write_gpt2_vocabulary(const BpeVocabulary& vocabulary, const fs::path& directory, FileNames names) {
  fs::create_directories(directory);
  const Gpt2VocabularyTexts texts = gpt2_vocabulary_texts(vocabulary);
  const bool openai = names == FileNames::openai;
  for (const auto& [name, contents] :
       {std::pair{openai ? encoder_file_name : hf_encoder_file_name, &texts.encoder_json},
        std::pair{openai ? merges_file_name : hf_merges_file_name, &texts.vocab_bpe}}) {
    const fs::path path = directory / name;
    std::ofstream file(path, std::ios::binary);
    file << *contents;
    if (!file.flush()) throw TokenizerFileError(path.string() + ": cannot write the file");
  }
}

}  // namespace tg::tokenizer
