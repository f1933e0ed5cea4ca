// Ctrl-C and SIGTERM during training: the first asks the run to stop after the
// step under way and save (training/train.h, TrainOutputs::stop_requested); a
// second ends the process at once, as the signal's default would (the last good
// checkpoint stays whole: every save is atomic).
//
// The command then exits with 128 + the signal's number, the shell's convention:
// 130 for Ctrl-C (SIGINT), 143 for SIGTERM (main() catches StoppedBySignal).
#pragma once
#include <atomic>
#include <csignal>

namespace tg::cli {

// Handles SIGINT and SIGTERM while it lives; the previous handlers come back after.
class StopOnSignals {
 public:
  // `note` goes to stderr at the first signal (a string literal: the handler reads it).
  explicit StopOnSignals(
      const char* note = "\ntinygpt: stopping after this step and saving; a second Ctrl-C (or SIGTERM) quits at once\n");
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

  const std::atomic<bool>& requested() const;
  int signal_number() const;  // the first signal received; 0 before
  const char* signal_name() const;  // "Ctrl-C (SIGINT)", "SIGTERM"

 private:
  struct sigaction previous_interrupt_, previous_terminate_;
};

// Thrown once a stopped command has said what it saved; main() returns exit_code().
struct StoppedBySignal {
  int signal_number;
  int exit_code() const { return 128 + signal_number; }
};

}  // namespace tg::cli
