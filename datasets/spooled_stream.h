// A text that arrives as a stream (a pipe, a named pipe, standard input) can be
// read only once, but `tinygpt prepare` reads each source twice (char-level
// collects the characters, then encodes) and checks that both passes saw the
// same bytes. So prepare copies a stream once, as it arrives, into a temporary
// file in the output directory, and then reads that copy like any other file:
//
//   tinygpt prepare --data <(zcat corpus.gz) --tokenizer gpt2 --out data/corpus
//   zcat corpus.gz | tinygpt prepare --data - --tokenizer gpt2 --out data/corpus
//
// The copy is an AtomicFile that is never committed (tensor/io/atomic_file.h):
// DIR/.source.tmp.PID.N, created with O_EXCL, removed when the SpooledStream
// goes, after a prepare that succeeded and one that failed alike; one that a
// killed prepare left is removed by the next (remove_stale_temporary_files).
#pragma once

#include <cstdint>
#include <string>

#include "tinygpt/datasets/progress_line.h"
#include "tinygpt/tensor/io/atomic_file.h"

namespace tg {

// What prepare may read, and how: a regular file in place, a stream through a copy.
enum class SourceKind { file, stream };

// "-" is standard input. Throws tg::Error naming the source when it is missing,
// a directory, or a device or a socket (/dev/zero could be read without end;
// standard input may be a socket, but not a terminal).
SourceKind source_kind(const std::string& source);

// The target name of the copies in the output directory (its temporary files are the copies).
inline constexpr const char* kStreamCopyName = ".source";

class SpooledStream {
 public:
  // Reads the stream `source` ("-": standard input) to its end into a copy in
  // `directory`. Throws tg::Error naming it past `limit_bytes`, when it cannot be
  // read or the copy cannot be written, and for a named pipe that no program
  // has written into within 10 s of opening it (instead of waiting for ever).
  SpooledStream(const std::string& source, const std::string& directory, uint64_t limit_bytes,
                ProgressLine& progress);

  const std::string& path() const { return copy_.temporary_path(); }
  int64_t bytes() const { return bytes_; }
  uint64_t xxh3() const { return xxh3_; }  // of the bytes, as datasets/file_hash.h hashes a file

 private:
  AtomicFile copy_;  // never committed: its destructor removes the copy
  int64_t bytes_ = 0;
  uint64_t xxh3_ = 0;
};

// The most prepare copies from streams into `directory` by default: half the
// space free there (so that the token files still have room), as
// std::filesystem::space reports it for an unprivileged user.
uint64_t default_stream_limit_bytes(const std::string& directory);

}  // namespace tg
