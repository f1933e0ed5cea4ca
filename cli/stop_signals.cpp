#include "cli/stop_signals.h"

#include <unistd.h>

#include <string>

namespace tg::cli {

namespace {

std::atomic<bool> stop_requested{false};
std::atomic<int> first_signal{0};
std::atomic<const char*> stop_note{nullptr};

// Only async-signal-safe calls here: atomics, write, signal, raise.
void on_stop_signal(int signal_number) {
  if (stop_requested.load()) {
    std::signal(signal_number, SIG_DFL);  // the second: end now
    std::raise(signal_number);
    return;
  }
  first_signal.store(signal_number);  // before the request, which the run reads first
  stop_requested.store(true);
  const char* note = stop_note.load();
  const ssize_t ignored = write(STDERR_FILENO, note, std::char_traits<char>::length(note));
  (void)ignored;
}

}  // namespace

StopOnSignals::StopOnSignals(const char* note) {
  stop_note.store(note);
  stop_requested.store(false);
  first_signal.store(0);
  struct sigaction action = {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previous_interrupt_);
  sigaction(SIGTERM, &action, &previous_terminate_);
}

StopOnSignals::~StopOnSignals() {
  sigaction(SIGINT, &previous_interrupt_, nullptr);
  sigaction(SIGTERM, &previous_terminate_, nullptr);
}

const std::atomic<bool>& StopOnSignals::requested() const { return stop_requested; }

int StopOnSignals::signal_number() const { return first_signal.load(); }

const char* StopOnSignals::signal_name() const {
  return signal_number() == SIGINT ? "Ctrl-C (SIGINT)" : "SIGTERM";
}

}  // namespace tg::cli
