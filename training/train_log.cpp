#include "tinygpt/training/train_log.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

constexpr int64_t kPlainLineInterval = 10;  // steps between progress lines when not on a terminal
constexpr double kSmoothing = 0.1;          // weight of the newest step in the moving average

// "1h02m", "3m07s", "12s"
std::string format_duration(double seconds) {
  const auto total = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char text[32];
  if (total >= 3600) std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(total / 3600),
                                   static_cast<long long>(total % 3600 / 60));
  else if (total >= 60) std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(total / 60),
                                      static_cast<long long>(total % 60));
  else std::snprintf(text, sizeof text, "%llds", static_cast<long long>(total));
  return text;
}

// The metrics log of a run resumed at step `resumed_at`, as it stood when that
// step's checkpoint was written: whole lines only, none of a later step.
// Returns the last step it keeps a line of (-1: none, or no log at all).
int64_t cut_back_metrics(const std::string& path, int64_t resumed_at) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return -1;  // no log yet: the resumed run starts one
  std::string kept, line;
  int64_t last_kept = -1;
  while (std::getline(file, line)) {
    if (file.eof()) break;  // no newline after it: a write cut short by a crash
    const nlohmann::json record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    const int64_t iter = record.is_object() ? record.value("iter", int64_t{0}) : 0;
    if (iter > resumed_at) continue;  // redone after the resume
    last_kept = std::max(last_kept, iter);
    kept += line + '\n';
  }
  write_file_atomically(path, kept, "train: the metrics log");
  return last_kept;
}

}  // namespace

TrainLog::TrainLog(std::ostream& progress, bool progress_is_terminal, const std::string& metrics_path,
                   int64_t resumed_at, int64_t tokens_per_step, int ranks)
    : progress_(progress), progress_is_terminal_(progress_is_terminal), metrics_path_(metrics_path),
      tokens_per_step_(tokens_per_step), ranks_(ranks) {
  if (metrics_path.empty()) return;
  if (resumed_at >= 0) {
    const int64_t last_kept = cut_back_metrics(metrics_path, resumed_at);
    // A log deleted (or begun elsewhere) has a gap: said, since a plot of it would hide it.
    if (last_kept < resumed_at)
      note("note: the metrics log " + metrics_path + (last_kept < 0 ? " holds no line" : " ends at step " +
           std::to_string(last_kept)) + " before this resume at step " + std::to_string(resumed_at) +
           "; it goes on from here, with that gap");
  }
  metrics_.open(metrics_path, resumed_at >= 0 ? std::ios::app : std::ios::trunc);
  check(metrics_.good(), "train: cannot open the metrics log '", metrics_path, "' for writing");
}

void TrainLog::check_metrics_file_is_there(int64_t step) {
  std::error_code error;
  if (!metrics_.is_open() || std::filesystem::exists(metrics_path_, error)) return;
  // Deleted under the run (the lines would go on into a file no name reaches): start it again.
  metrics_.close();
  metrics_.open(metrics_path_, std::ios::trunc);
  check(metrics_.good(), "train: the metrics log '", metrics_path_, "' was deleted and cannot be made again");
  note("note: the metrics log " + metrics_path_ + " was deleted during the run; a new one starts at step " +
       std::to_string(step));
}

void TrainLog::write_metrics(const std::string& line) {
  metrics_ << line << '\n' << std::flush;
  check(metrics_.good(), "train: cannot write the metrics log '", metrics_path_,
        "' (is the disk full?); stopping rather than train without a record");
}

void TrainLog::step(const StepReport& report) {
  smoothed_seconds_ = smoothed_seconds_ == 0 ? report.seconds
                                             : (1 - kSmoothing) * smoothed_seconds_ + kSmoothing * report.seconds;
  last_tokens_per_s_ = static_cast<double>(tokens_per_step_) / report.seconds;
  if (metrics_.is_open()) {
    nlohmann::json line = {{"iter", report.step},         {"train_loss", report.loss},
                           {"lr", report.lr},             {"grad_norm", report.grad_norm},
                           {"tokens_per_s", last_tokens_per_s_}, {"step_ms", report.seconds * 1e3}};
    if (ranks_ > 1) line["all_reduce_ms"] = report.all_reduce_seconds * 1e3;
    write_metrics(line.dump());
  }
  const bool last = report.step == report.total_steps;
  if (!progress_is_terminal_ && report.step % kPlainLineInterval != 0 && !last) return;
  char all_reduce[48] = "";
  if (ranks_ > 1) std::snprintf(all_reduce, sizeof all_reduce, " (all-reduce %.1f ms)", report.all_reduce_seconds * 1e3);
  char text[240];
  std::snprintf(text, sizeof text,
                "step %lld/%lld | loss %.4f | lr %.2e | %lld tokens/step | %.0f tokens/s | %.1f ms/step%s | ETA %s",
                static_cast<long long>(report.step), static_cast<long long>(report.total_steps), report.loss,
                report.lr, static_cast<long long>(tokens_per_step_), tokens_per_step_ / smoothed_seconds_, smoothed_seconds_ * 1e3, all_reduce,
                format_duration(smoothed_seconds_ * static_cast<double>(report.total_steps - report.step)).c_str());
  if (progress_is_terminal_) {
    progress_ << "\r\033[K" << text << std::flush;  // \033[K clears what a longer previous line left
    live_line_open_ = true;
    live_line_is_eval_progress_ = false;
  } else {
    progress_ << text << '\n' << std::flush;
  }
}

void TrainLog::eval_progress(int64_t step, int64_t batches_done, int64_t batches, double seconds) {
  if (batches_done == 0) eval_progress_printed_at_ = 0;
  const double interval = progress_is_terminal_ ? 1 : 10;
  if (seconds < eval_progress_printed_at_ + interval) return;
  if (!progress_is_terminal_) eval_progress_printed_at_ = seconds;
  char text[160];
  std::snprintf(text, sizeof text, "eval step %lld | batch %lld/%lld of each split | %s",
                static_cast<long long>(step), static_cast<long long>(batches_done), static_cast<long long>(batches),
                format_duration(seconds).c_str());
  if (progress_is_terminal_) {
    progress_ << "\r\033[K" << text << std::flush;
    live_line_open_ = live_line_is_eval_progress_ = true;
  } else {
    progress_ << text << '\n' << std::flush;
  }
}

void TrainLog::eval(const EvalReport& report, bool best) {
  check_metrics_file_is_there(report.step);
  if (live_line_is_eval_progress_) {
    progress_ << "\r\033[K";
    live_line_open_ = live_line_is_eval_progress_ = false;
  }
  end_live_line();
  char text[200];
  std::snprintf(text, sizeof text, "eval step %lld | train loss %.4f (ppl %.2f) | val loss %.4f (ppl %.2f)%s",
                static_cast<long long>(report.step), report.train_loss, std::exp(report.train_loss),
                report.val_loss, std::exp(report.val_loss), best ? " | best so far" : "");
  progress_ << text << '\n' << std::flush;
  if (metrics_.is_open()) {
    nlohmann::json line = {{"iter", report.step},         {"eval", true},
                           {"train_loss", report.train_loss}, {"val_loss", report.val_loss},
                           {"val_perplexity", std::exp(report.val_loss)}, {"lr", report.lr},
                           {"tokens_per_s", last_tokens_per_s_}, {"elapsed_s", report.elapsed_seconds}};
    write_metrics(line.dump());
  }
}

void TrainLog::note(const std::string& line) {
  end_live_line();
  progress_ << line << '\n' << std::flush;
}

void TrainLog::end_live_line() {
  if (!live_line_open_) return;
  progress_ << '\n';
  live_line_open_ = live_line_is_eval_progress_ = false;
}

}  // namespace tg
