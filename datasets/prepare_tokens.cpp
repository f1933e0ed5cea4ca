#include "tinygpt/datasets/prepare_tokens.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <variant>

#include "tinygpt/datasets/data.h"
#include "tinygpt/datasets/progress_line.h"
#include "tinygpt/datasets/spooled_stream.h"
#include "tinygpt/datasets/text_pieces.h"
#include "tinygpt/datasets/token_file_writer.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tokenizer/char_tokenizer.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/gpt2_tokenizer.h"
#include "tinygpt/tokenizer/hf_tokenizer.h"
#include "tinygpt/tokenizer/safe_cuts.h"

namespace tg {

namespace {

namespace fs = std::filesystem;
using tokenizer::TokenId;

constexpr const char* kWho = "prepare";
constexpr char32_t kCodePointLimit = 0x110000;
// A round of pieces, encoded in one parallel region, holds at least this much
// text and two pieces per thread (so one slow piece leaves the others little
// idle time). Rounds of a few small pieces cost more than they encode: on a
// busy machine the idle OpenMP threads spin against the thread that reads
// (tiny Shakespeare in 256-byte rounds took 5 s instead of 0.2 s).
constexpr std::size_t kMinRoundBytes = std::size_t{1} << 20;

// A source as the passes read it: a regular file in place, a stream through its copy.
struct SourceText {
  std::string name;  // as it was given: what errors and meta.json name
  std::string path;  // what is read
  int64_t bytes = 0;
};

// What each source is, checked before anything is created.
std::vector<SourceKind> check_sources(const std::vector<std::string>& sources) {
  check(!sources.empty(), kWho, ": no text file given");
  std::vector<SourceKind> kinds;
  for (const std::string& source : sources) kinds.push_back(source_kind(source));
  return kinds;
}

// Sizes the files and copies the streams into the output directory (into
// `copies`, which removes them when it goes), in the order given; each source's
// entry of meta.json goes into `meta`.
std::vector<SourceText> read_sources(const PrepareOptions& options, const std::vector<SourceKind>& kinds,
                                     std::vector<std::unique_ptr<SpooledStream>>& copies,
                                     std::vector<TokenSourceMeta>& meta) {
  uint64_t stream_bytes_left = options.stream_limit_bytes > 0 ? options.stream_limit_bytes
                                                              : default_stream_limit_bytes(options.out_directory);
  std::vector<SourceText> sources;
  for (std::size_t index = 0; index < kinds.size(); ++index) {
    const std::string& name = options.sources[index];
    if (kinds[index] == SourceKind::file) {
      std::error_code error;
      const uintmax_t bytes = fs::file_size(name, error);
      check(!error, "cannot read '", name, "': ", error.message());
      sources.push_back({name, name, static_cast<int64_t>(bytes)});
      meta.push_back({name, static_cast<int64_t>(bytes)});
      continue;
    }
    ProgressLine progress(options.progress, options.progress_is_terminal, "prepare: copying '" + name + "'", -1);
    const SpooledStream& copy = *copies.emplace_back(
        std::make_unique<SpooledStream>(name, options.out_directory, stream_bytes_left, progress));
    stream_bytes_left -= static_cast<uint64_t>(copy.bytes());
    sources.push_back({name, copy.path(), copy.bytes()});
    meta.push_back({name, copy.bytes(), true, copy.xxh3()});
  }
  return sources;
}

struct Piece {
  std::string text;
  int64_t offset = 0;  // where it starts in its file
};

// Fills round[0, count) with the next pieces of the file and returns count: at
// least `min_pieces` pieces and kMinRoundBytes of text, unless the file ends first.
std::size_t read_round(TextPieceReader& reader, std::size_t min_pieces, std::vector<Piece>& round) {
  std::size_t count = 0;
  for (std::size_t bytes = 0; count < min_pieces || bytes < kMinRoundBytes; ++count) {
    if (count == round.size()) round.emplace_back();
    if (!reader.next(round[count].text)) break;
    round[count].offset = reader.piece_offset();
    bytes += round[count].text.size();
  }
  return count;
}

// Reads one source in pieces, runs `work(piece_text, piece_offset)` on each,
// on all threads a round at a time, and hands the results to
// `consume(result, piece_bytes)` in the order of the file.
template <class Result, class Work, class Consume>
void for_each_piece(const SourceText& source, std::size_t piece_bytes, FindCut find_cut, const Work& work,
                    const Consume& consume) {
  std::ifstream file(source.path, std::ios::binary);
  check(file.good(), "cannot read '", source.name, "': ", std::strerror(errno));
  TextPieceReader reader(file, source.name, piece_bytes, find_cut);
  const std::size_t min_pieces = 2 * static_cast<std::size_t>(num_threads());
  std::vector<Piece> round;
  std::vector<Result> results;
  std::vector<std::exception_ptr> errors;
  int64_t bytes_read = 0;
  for (std::size_t count; (count = read_round(reader, min_pieces, round)) > 0;) {
    results.assign(count, Result{});
    errors.assign(count, nullptr);
#pragma omp parallel for schedule(dynamic, 1)
    for (std::size_t i = 0; i < count; ++i) {
      try {
        results[i] = work(round[i].text, round[i].offset);
      } catch (...) {  // an exception must not leave an OpenMP region
        errors[i] = std::current_exception();
      }
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (errors[i]) std::rethrow_exception(errors[i]);
      consume(results[i], round[i].text.size());
      bytes_read += static_cast<int64_t>(round[i].text.size());
    }
  }
  // Both passes must see the same text: the vocabulary of the first has to cover the second.
  check(bytes_read == source.bytes, "'", source.name, "' changed while prepare read it (", source.bytes,
        " bytes at the start, ", bytes_read, " now)");
}

// A tokenizer error inside one piece, named by the file and where the piece starts
// (the error's own byte offsets count from there).
[[noreturn]] void fail_in_piece(const std::string& path, int64_t offset, const std::exception& error) {
  if (offset == 0) fail("'", path, "': ", error.what());
  fail("'", path, "', in the part from byte ", offset, ": ", error.what());
}

// Pass one of char-level: the distinct characters of every source, as
// CharTokenizer::from_corpus would find them in the whole text.
tokenizer::CharTokenizer collect_characters(const std::vector<SourceText>& sources, const PrepareOptions& options,
                                            int64_t total_bytes) {
  ProgressLine progress(options.progress, options.progress_is_terminal, "prepare: collecting characters", total_bytes);
  std::vector<bool> seen(kCodePointLimit, false);
  for (const SourceText& source : sources) {
    for_each_piece<std::vector<char32_t>>(
        source, options.piece_bytes, tokenizer::next_character_cut,
        [&](const std::string& piece, int64_t offset) {
          try {
            return tokenizer::CharTokenizer::from_corpus(piece).characters();
          } catch (const tokenizer::TokenizerError& error) {
            fail_in_piece(source.name, offset, error);
          }
        },
        [&](const std::vector<char32_t>& characters, std::size_t bytes) {
          for (const char32_t c : characters) seen[c] = true;
          progress.add(static_cast<int64_t>(bytes), 0);
        });
  }
  progress.finish();
  std::vector<char32_t> characters;
  for (char32_t c = 0; c < kCodePointLimit; ++c) {
    if (seen[c]) characters.push_back(c);
  }
  return tokenizer::CharTokenizer(std::move(characters));
}

// The vocabulary files of a BPE tokenizer, under the names read_gpt2_vocabulary prefers.
struct VocabularyFiles {
  fs::path encoder;
  fs::path merges;
};

VocabularyFiles vocabulary_files(const std::string& directory) {
  const fs::path root(directory);
  check(tokenizer::has_gpt2_vocabulary(root), kWho, ": '", directory, "' holds no ", tokenizer::encoder_file_name,
        " and ", tokenizer::merges_file_name, " (nor ", tokenizer::hf_encoder_file_name, " and ",
        tokenizer::hf_merges_file_name, ")");
  if (fs::is_regular_file(root / tokenizer::encoder_file_name))
    return {root / tokenizer::encoder_file_name, root / tokenizer::merges_file_name};
  return {root / tokenizer::hf_encoder_file_name, root / tokenizer::hf_merges_file_name};
}

using Tokenizer = std::variant<tokenizer::CharTokenizer, tokenizer::Gpt2Tokenizer, tokenizer::HfTokenizer>;

// The tokenizer of a dataset, how meta.json describes it, and what it needs beside.
struct ChosenTokenizer {
  Tokenizer tokenizer;
  DatasetTokenizerMeta meta;
  std::optional<TokenId> separator;         // between documents: BPE's <|endoftext|>
  std::optional<VocabularyFiles> files;     // BPE: to copy into the dataset
  std::vector<fs::path> hf_files;           // hf: tokenizer.json (and tokenizer_config.json), to copy
};

ChosenTokenizer choose_hf_tokenizer(const PrepareOptions& options, const std::vector<SourceText>& sources) {
  const fs::path root(options.vocabulary_directory);
  std::optional<tokenizer::HfTokenizer> hf;
  try {
    hf.emplace(tokenizer::HfTokenizer::load(root));
  } catch (const tokenizer::TokenizerError& error) {
    fail(kWho, ": ", error.what());
  }
  const std::optional<TokenId> separator = hf->eos_id();
  check(separator.has_value() || sources.size() == 1, kWho, ": the tokenizer in '", options.vocabulary_directory,
        "' has no eos token to put between the ", sources.size(), " documents; give one file");
  DatasetTokenizerMeta meta{"hf", "", "", "", tokenizer::hf_tokenizer_file_name, ""};
  std::vector<fs::path> files{root / tokenizer::hf_tokenizer_file_name};
  if (hf->tokenizer_config_json()) {
    meta.tokenizer_config_file = tokenizer::hf_tokenizer_config_file_name;
    files.push_back(root / tokenizer::hf_tokenizer_config_file_name);
  }
  return {std::move(*hf), std::move(meta), separator, std::nullopt, std::move(files)};
}

ChosenTokenizer choose_tokenizer(const PrepareOptions& options, const std::vector<SourceText>& sources,
                                 int64_t total_bytes) {
  if (options.tokenizer == DatasetTokenizer::char_level) {
    tokenizer::CharTokenizer characters = collect_characters(sources, options, total_bytes);
    DatasetTokenizerMeta meta{"char", characters.serialize(), "", "", "", ""};
    return {std::move(characters), std::move(meta), std::nullopt, std::nullopt, {}};
  }
  if (options.tokenizer == DatasetTokenizer::hf) return choose_hf_tokenizer(options, sources);
  const VocabularyFiles files = vocabulary_files(options.vocabulary_directory);
  std::optional<tokenizer::Gpt2Tokenizer> bpe;
  try {
    bpe.emplace(tokenizer::read_gpt2_vocabulary(files.encoder, files.merges));
  } catch (const tokenizer::TokenizerError& error) {
    fail(kWho, ": ", error.what());
  }
  const std::optional<TokenId> separator = bpe->special_token("<|endoftext|>");
  check(separator.has_value() || sources.size() == 1, kWho, ": the vocabulary in '", options.vocabulary_directory,
        "' has no <|endoftext|> token to put between the ", sources.size(),
        " documents; give one file, or a vocabulary that has it");
  DatasetTokenizerMeta meta{options.tokenizer == DatasetTokenizer::gpt2 ? "gpt2" : "bpe", "",
                            tokenizer::encoder_file_name, tokenizer::merges_file_name, "", ""};
  return {std::move(*bpe), std::move(meta), separator, files, {}};
}

// Pass two: every source encoded into the writer, documents separated by `separator` if there is one.
void encode_sources(const std::vector<SourceText>& sources, const Tokenizer& tokenizer,
                    std::optional<TokenId> separator, const PrepareOptions& options, int64_t total_bytes,
                    SplitTokenWriter& writer) {
  const auto* gpt2 = std::get_if<tokenizer::Gpt2Tokenizer>(&tokenizer);
  const auto* characters = std::get_if<tokenizer::CharTokenizer>(&tokenizer);
  const auto* hf = std::get_if<tokenizer::HfTokenizer>(&tokenizer);
  // A Hugging Face tokenizer: no cut, each document whole (see prepare_tokens.h).
  const FindCut no_cut = [](std::string_view, std::size_t) { return std::string_view::npos; };
  const FindCut find_cut = gpt2 ? tokenizer::next_gpt2_cut : hf ? no_cut : tokenizer::next_character_cut;
  ProgressLine progress(options.progress, options.progress_is_terminal, "prepare: encoding", total_bytes);
  for (std::size_t index = 0; index < sources.size(); ++index) {
    if (index > 0 && separator) writer.append(std::span<const TokenId>(&*separator, 1));
    const SourceText& source = sources[index];
    for_each_piece<std::vector<TokenId>>(
        source, options.piece_bytes, find_cut,
        [&](const std::string& piece, int64_t offset) {
          try {
            // "<|endoftext|>" written in a text is the separator it names, as when training encodes
            // a text in memory (TextTokenizer::encode); a safe cut never falls inside it.
            if (hf) return hf->encode(piece, false);  // its added tokens ("<|im_end|>") are recognised
            return gpt2 ? gpt2->encode(piece, tokenizer::SpecialTokens::recognised) : characters->encode(piece);
          } catch (const tokenizer::TokenizerError& error) {
            fail_in_piece(source.name, offset, error);
          }
        },
        [&](const std::vector<TokenId>& ids, std::size_t bytes) {
          writer.append(ids);
          progress.add(static_cast<int64_t>(bytes), static_cast<int64_t>(ids.size()));
        });
  }
  progress.finish();
}

// Creates the output directory, and removes the temporary files an interrupted prepare left in it.
void make_output_directory(const PrepareOptions& options) {
  const fs::path out(options.out_directory);
  std::error_code error;
  fs::create_directories(out, error);
  check(!error && fs::is_directory(out), kWho, ": cannot use '", options.out_directory, "' as the output directory",
        error ? ": " + error.message() : ": it is a file");
  for (const char* name : {kTrainTokensFile, kValTokensFile, kTokenDatasetMetaFile, tokenizer::encoder_file_name,
                           tokenizer::merges_file_name, tokenizer::hf_tokenizer_file_name,
                           tokenizer::hf_tokenizer_config_file_name, kStreamCopyName}) {
    const int removed = remove_stale_temporary_files((out / name).string());
    if (removed > 0 && options.progress)
      *options.progress << "prepare: removed " << removed << " temporary file(s) an interrupted run left beside "
                        << name << "\n";
  }
}

void copy_file_atomically(const fs::path& from, const fs::path& to) {
  write_file_atomically(to.string(), read_text_file(from.string()), kWho);
}

}  // namespace

PrepareSummary prepare_token_dataset(const PrepareOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  check(options.val_fraction >= 0 && options.val_fraction < 1, kWho, ": the validation fraction ",
        options.val_fraction, " must be in [0, 1)");
  PrepareSummary summary;
  TokenDatasetMeta& meta = summary.meta;
  const std::vector<SourceKind> kinds = check_sources(options.sources);
  make_output_directory(options);
  std::vector<std::unique_ptr<SpooledStream>> copies;  // removed when prepare returns or throws
  const std::vector<SourceText> sources = read_sources(options, kinds, copies, meta.sources);
  for (const SourceText& source : sources) summary.source_bytes += source.bytes;
  check(summary.source_bytes > 0, kWho, ": the text files are empty");

  const ChosenTokenizer chosen = choose_tokenizer(options, sources, summary.source_bytes);
  meta.tokenizer = chosen.meta;
  meta.vocab_size = std::visit([](const auto& t) { return static_cast<int64_t>(t.vocab_size()); }, chosen.tokenizer);
  meta.dtype = token_dtype_for_vocab_size(meta.vocab_size);

  const fs::path out(options.out_directory);
  SplitTokenWriter writer(out.string(), meta.dtype, kWho);
  encode_sources(sources, chosen.tokenizer, chosen.separator, options, summary.source_bytes, writer);
  // Where split_by_position (datasets/data.h) splits, with its train fraction.
  const double train_fraction = 1.0 - options.val_fraction;
  writer.split(static_cast<int64_t>(static_cast<double>(writer.tokens()) * train_fraction));
  meta.train = writer.train();
  meta.val = writer.val();

  // From here on the directory is not a dataset until the new meta.json is in place.
  const std::string meta_path = (out / kTokenDatasetMetaFile).string();
  fs::remove(meta_path);
  writer.commit();
  if (chosen.files) {
    copy_file_atomically(chosen.files->encoder, out / meta.tokenizer.encoder_file);
    copy_file_atomically(chosen.files->merges, out / meta.tokenizer.merges_file);
  }
  for (const fs::path& file : chosen.hf_files) copy_file_atomically(file, out / file.filename());
  write_file_atomically(meta_path, meta.to_json().dump(2) + "\n", kWho);
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return summary;
}

}  // namespace tg
