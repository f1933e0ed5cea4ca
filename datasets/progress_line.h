// The progress of a long pass over bytes (prepare's encoding of a corpus), as
// one line: how far, how fast, tokens so far and the time left.
//
//   prepare: encoding 512.0 of 2048.0 MB (25%), 48.3 MB/s, 121.4M tokens, ETA 32 s
//   prepare: copying '/dev/fd/63' 512.0 MB, 48.3 MB/s      (a stream: its size is unknown)
//
// On a terminal the line is rewritten in place a few times a second; in a log
// file a new line is written every few seconds, so logs stay short.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace tg {

class ProgressLine {
 public:
  // `out` null: nothing is shown. `what` names the pass ("prepare: encoding").
  // `total_bytes` negative: unknown (a stream), so no share, tokens or time left.
  ProgressLine(std::ostream* out, bool is_terminal, std::string what, int64_t total_bytes);

  void add(int64_t bytes, int64_t tokens);
  // The final figures; on a terminal, ends the line that was being rewritten.
  void finish();

 private:
  void show();

  std::ostream* out_;
  bool is_terminal_;
  std::string what_;
  int64_t total_bytes_;
  int64_t bytes_ = 0;
  int64_t tokens_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point shown_ = started_;
};

}  // namespace tg
