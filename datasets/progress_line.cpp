#include "tinygpt/datasets/progress_line.h"

#include <cstdio>

namespace tg {

namespace {

using Seconds = std::chrono::duration<double>;

constexpr Seconds kTerminalInterval{0.2};  // between rewrites of the line on a terminal
constexpr Seconds kLogInterval{5.0};       // between lines in a log file

}  // namespace

ProgressLine::ProgressLine(std::ostream* out, bool is_terminal, std::string what, int64_t total_bytes)
    : out_(out), is_terminal_(is_terminal), what_(std::move(what)), total_bytes_(total_bytes) {}

void ProgressLine::add(int64_t bytes, int64_t tokens) {
  bytes_ += bytes;
  tokens_ += tokens;
  const auto now = std::chrono::steady_clock::now();
  if (now - shown_ >= (is_terminal_ ? kTerminalInterval : kLogInterval)) {
    show();
    shown_ = now;
  }
}

void ProgressLine::finish() {
  show();
  if (out_ != nullptr && is_terminal_) *out_ << '\n' << std::flush;
}

void ProgressLine::show() {
  if (out_ == nullptr) return;
  const double seconds = Seconds(std::chrono::steady_clock::now() - started_).count();
  const double megabytes_per_second = seconds > 0 ? static_cast<double>(bytes_) / 1e6 / seconds : 0;
  const double percent = total_bytes_ > 0 ? 100.0 * static_cast<double>(bytes_) / static_cast<double>(total_bytes_) : 100;
  const double seconds_left =
      bytes_ > 0 ? seconds * static_cast<double>(total_bytes_ - bytes_) / static_cast<double>(bytes_) : 0;
  char line[200];
  if (total_bytes_ < 0) {
    std::snprintf(line, sizeof line, "%s %.1f MB, %.1f MB/s", what_.c_str(), static_cast<double>(bytes_) / 1e6,
                  megabytes_per_second);
  } else {
    std::snprintf(line, sizeof line, "%s %.1f of %.1f MB (%.0f%%), %.1f MB/s, %.2fM tokens, ETA %.0f s",
                  what_.c_str(), static_cast<double>(bytes_) / 1e6, static_cast<double>(total_bytes_) / 1e6, percent,
                  megabytes_per_second, static_cast<double>(tokens_) / 1e6, seconds_left);
  }
  // On a terminal, \r returns to the start of the line and \033[K clears what a longer line left.
  if (is_terminal_) {
    *out_ << "\r\033[K" << line << std::flush;
  } else {
    *out_ << line << '\n' << std::flush;
  }
}

}  // namespace tg
