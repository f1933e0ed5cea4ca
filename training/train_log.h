// What a training run reports, and where:
//   - a progress line on the progress stream (stderr in the CLI): step, loss,
//     learning rate, tokens/s and the estimated time left. On a terminal it
//     rewrites itself in place every step; elsewhere (a log file, CI) it is
//     printed as a whole line every `kPlainLineInterval` steps;
//   - an evaluation line after each evaluation: train and val loss and perplexity;
//   - a JSON Lines metrics file (optional): one object per step,
//       {"iter": 12, "train_loss": 3.91, "lr": 0.00012, "tokens_per_s": 10500.0, "step_ms": 73.1}
//     (a job of several ranks adds "all_reduce_ms", the part of step_ms spent averaging gradients;
//     tokens_per_s is always the whole job's)
//     and one per evaluation,
//       {"iter": 250, "eval": true, "train_loss": 2.31, "val_loss": 2.35, "val_perplexity": 10.5, "lr": ..., "tokens_per_s": ...,
//        "elapsed_s": 81.2}
//     where train_loss is the evaluation's estimate over eval_iters batches and elapsed_s the
//     wall time since this session of the run began, evaluations and checkpoints included
//     (what a time-to-target is measured in: bench/run_speedrun.sh).
#pragma once
#include <cstdint>
#include <fstream>
#include <ostream>
#include <string>

namespace tg {

struct StepReport {
  int64_t step;           // 1-based: the number of optimiser steps taken, this one included
  int64_t total_steps;
  double loss;
  double lr;
  double grad_norm;       // before clipping
  double seconds;         // wall time of this step
  double all_reduce_seconds = 0;  // the part of it spent averaging the gradients over the ranks
};

struct EvalReport {
  int64_t step;           // optimiser steps taken before the evaluation
  double train_loss, val_loss;
  double lr;
  double elapsed_seconds;  // since the session began, up to the end of this evaluation
};

class TrainLog {
 public:
  // `metrics_path` empty: no metrics file. `resumed_at` >= 0: a run resumed from
  // the checkpoint of that step continues the existing file, which is first
  // cut back to that step (the lines of steps after the checkpoint are redone,
  // and a line a crash cut short is dropped). -1: a new run starts a new file.
  // A write that fails (a full disk) throws tg::Error naming the file.
  TrainLog(std::ostream& progress, bool progress_is_terminal, const std::string& metrics_path, int64_t resumed_at,
           int64_t tokens_per_step, int ranks = 1);

  void step(const StepReport& report);
  void eval(const EvalReport& report, bool best);
  void note(const std::string& line);  // any other line (checkpoint written, ...)
  // An evaluation under way, `seconds` in: shown once it takes a while (on a terminal
  // in place after 1 s, elsewhere a line every 10 s), so a slow one does not look hung.
  void eval_progress(int64_t step, int64_t batches_done, int64_t batches, double seconds);

 private:
  void end_live_line();
  void check_metrics_file_is_there(int64_t step);  // at each evaluation: a log deleted under the run starts again
  void write_metrics(const std::string& line);

  std::ostream& progress_;
  bool progress_is_terminal_;
  bool live_line_open_ = false;
  bool live_line_is_eval_progress_ = false;  // erased, not kept, when the evaluation's line follows
  std::string metrics_path_;
  std::ofstream metrics_;
  int64_t tokens_per_step_;  // of the whole job
  int ranks_;
  double smoothed_seconds_ = 0;  // exponential moving average of the step time, for tokens/s and the ETA
  double last_tokens_per_s_ = 0;
  double eval_progress_printed_at_ = 0;  // seconds into the current evaluation of the last plain line
};

}  // namespace tg
