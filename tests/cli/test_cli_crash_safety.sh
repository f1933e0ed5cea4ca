#!/usr/bin/env bash
# Crash safety of a training run (issue 17). A run that saves at every step is
# killed with SIGKILL after a random delay, again and again, often in the
# middle of a save; after every kill both checkpoints load, a resume removes the
# temporary files the killed save left, and the metrics log is whole, without
# repeated steps. Then, as root, runs on a tiny tmpfs run out of space in a save
# and in the metrics log: one error line naming the file, no temporary file, the
# previous checkpoint intact, and the run resumes once there is room.
#
# usage: test_cli_crash_safety.sh path/to/tinygpt   (CTest passes the built binary)
#   TINYGPT_CRASH_KILLS=200 for a longer run (default 25); TINYGPT_CRASH_SEED=N for other delays.
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

kills=${TINYGPT_CRASH_KILLS:-25}
RANDOM=${TINYGPT_CRASH_SEED:-17}  # seeds bash's generator: the same delays every time
max_delay_ms=400                  # the startup, then a step and its saves every 5 to 30 ms
aim_every=5                       # every 5th kill waits for a save to start, whatever the machine's speed

for _ in $(seq 60); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
# 0.4M parameters: model.safetensors (weights and AdamW's moments) is 4.8 MB and
# best.safetensors 1.6 MB, so the saves take half or more of every step.
model_flags=(--layers 2 --heads 4 --dims 128 --block-size 8 --batch-size 2 --eval-interval 1 --eval-iters 1 --seed 5)
goal=100000  # never reached: every run in the loop is killed
run=$work/run
# One thread: ctest runs two tests at once on two cores, where OpenMP's spinning threads would crawl.
train_flags=(--data "$work/corpus.txt" --threads 1)
train=("$tinygpt" train "${train_flags[@]}" --out "$run")

disk=$work/disk  # the tmpfs of the full-disk part
mkdir -p "$disk"
training_pid=
trap '[[ -n $training_pid ]] && kill -KILL "$training_pid" 2>/dev/null; mountpoint -q "$disk" && { umount "$disk" || umount -l "$disk"; }; rm -rf "$work"' EXIT

# The temporary files of interrupted writes in a folder (TARGET.tmp.PID.N, tensor/io/atomic_file.h).
temporary_files() { find "$1" -maxdepth 1 -name '*.tmp.*' -printf '%f ' 2>/dev/null; }

# checkpoint_step WHAT FILE: the checkpoint loads whole (header, tokenizer, every
# weight) and scores two tokens; prints its step.
checkpoint_step() {
  if ! "$tinygpt" eval --ckpt "$2" --ids "0 1" --threads 1 >/dev/null 2>"$work/eval.log"; then
    fail "$1: $2 does not load: $(cat "$work/eval.log")"
    return 1
  fi
  sed -n 's/^eval: .* (step \([0-9]*\), .*/\1/p' "$work/eval.log"
}

# check_metrics WHAT LOG STEP: the log is whole lines of JSON; its step lines are
# 1..STEP and its evaluation lines 0..STEP, each once (a resume repeats none).
check_metrics() {
  if ! python3 - "$2" "$3" 2>"$work/metrics.err" <<'EOF'; then
import json, sys
path, step = sys.argv[1], int(sys.argv[2])
text = open(path).read()
if text and not text.endswith("\n"):
    sys.exit(f"the last line is cut short: {text.splitlines()[-1][:80]!r}")
steps, evals = [], []
for number, line in enumerate(text.splitlines(), 1):
    try:
        record = json.loads(line)
    except ValueError:
        sys.exit(f"line {number} is not JSON: {line[:80]!r}")
    (evals if record.get("eval") else steps).append(record["iter"])
for name, lines, first in (("step", steps, 1), ("evaluation", evals, 0)):
    if lines != list(range(first, step + 1)):
        sys.exit(f"{name} lines for iters {lines[:4]} ... {lines[-4:]}, expected {first} to {step} once each")
EOF
    fail "$1: $2: $(cat "$work/metrics.err")"
  fi
}

# --- SIGKILL at random moments ----------------------------------------------
killed=0 aimed=0 during_save=0 aimed_during_save=0 during_log_rewrite=0 before_first_checkpoint=0
previous_step=0 step=0
while ((killed < kills)); do
  what="kill $((killed + 1))"
  if [[ -f $run/model.safetensors ]]; then
    "${train[@]}" --resume --iters "$goal" 2>"$work/train.log" &
  else
    "${train[@]}" "${model_flags[@]}" --iters "$goal" 2>"$work/train.log" &
  fi
  training_pid=$!
  aiming=$(((killed + 1) % aim_every == 0))
  if ((aiming)); then
    # Aimed at a save: the kill comes as soon as the temporary file of model.safetensors (the longer save) appears.
    aimed=$((aimed + 1))
    until compgen -G "$run/model.safetensors.tmp.*" >/dev/null || ! kill -0 "$training_pid" 2>/dev/null; do :; done
  else
    delay_ms=$((RANDOM % max_delay_ms))
    sleep "0.$(printf %03d "$delay_ms")"
  fi
  kill -KILL "$training_pid"
  wait "$training_pid" 2>/dev/null
  status=$?
  training_pid=
  killed=$((killed + 1))
  [[ $status -eq 137 ]] || fail "$what: the run ended with exit code $status before the kill: $(tail -3 "$work/train.log")"

  # What the kill interrupted, told by the temporary files it left.
  left=$(temporary_files "$run")
  if [[ $left == *.safetensors.tmp.* ]]; then
    during_save=$((during_save + 1))
    ((aiming)) && aimed_during_save=$((aimed_during_save + 1))
  fi
  [[ $left == *metrics.jsonl.tmp.* ]] && during_log_rewrite=$((during_log_rewrite + 1))
  [[ -f $run/model.safetensors ]] || before_first_checkpoint=$((before_first_checkpoint + 1))

  # Both checkpoints load as the kill left them, and the run never goes back.
  [[ -f $run/best.safetensors ]] && checkpoint_step "$what" "$run/best.safetensors" >/dev/null
  if [[ -f $run/model.safetensors ]]; then
    step=$(checkpoint_step "$what" "$run/model.safetensors") || break
    [[ $step -ge $previous_step ]] || fail "$what: model.safetensors went back from step $previous_step to $step"
    previous_step=$step
    # tinygpt plot reads the log as the kill left it (a line cut short at its end included);
    # a run resumed from step 0 starts the log anew, so a kill may have left it empty.
    if [[ -s $run/metrics.jsonl ]] && ! "$tinygpt" plot --metrics "$run" --out "$work/loss.svg" 2>"$work/plot.log"; then
      fail "$what: tinygpt plot fails on the log the kill left: $(cat "$work/plot.log")"
    fi
    # A resume that stops where the checkpoint is: it loads everything (the
    # optimiser too), removes the temporary files and cuts the log back; it writes nothing.
    "${train[@]}" --resume --iters "$step" 2>"$work/resume.log" ||
      fail "$what: train --resume at step $step failed: $(tail -3 "$work/resume.log")"
  else
    # Killed before the first checkpoint: a new run of 0 steps writes it (and clears what the kill left).
    step=0
    "${train[@]}" "${model_flags[@]}" --iters 0 2>"$work/resume.log" ||
      fail "$what: a new run of 0 steps failed: $(tail -3 "$work/resume.log")"
  fi
  if [[ -n $left ]] && ! grep -q "^removed .* temporary file" "$work/resume.log"; then
    fail "$what: the next run did not say it removed the temporary files ($left)"
  fi
  [[ -z $(temporary_files "$run") ]] || fail "$what: temporary files survived the next run: $(temporary_files "$run")"
  check_metrics "$what" "$run/metrics.jsonl" "$step"
  [[ $failures -eq 0 ]] || break  # one broken state is enough to read
done
random_kills=$((killed - aimed))
echo "$killed kills: $((during_save - aimed_during_save)) of $random_kills after a random delay (0 to $max_delay_ms ms) and" \
  "$aimed_during_save of $aimed aimed at a save landed during a save of a checkpoint; $during_log_rewrite while" \
  "rewriting the metrics log, $before_first_checkpoint before the first checkpoint; the checkpoint reached step $step"
# Aimed kills can miss on a busy machine (the poll loses the processor while the save ends), rarely all of them.
[[ $during_save -ge $((aimed / 2)) ]] || fail "only $during_save kills landed during a save: the test means little here"

# The run resumed to its end: the log has every step once.
end=$((step + 5))
"${train[@]}" --resume --iters "$end" 2>"$work/final.log" || fail "final resume to step $end failed: $(tail -3 "$work/final.log")"
grep -q "^done: step $end " "$work/final.log" || fail "final resume: did not reach step $end: $(tail -3 "$work/final.log")"
check_metrics "final resume" "$run/metrics.jsonl" "$end"
[[ -z $(temporary_files "$run") ]] || fail "final resume: temporary files left: $(temporary_files "$run")"

# --- A full disk ----------------------------------------------------------------
# On a tmpfs of a chosen size, which only root may mount (CI runs as root; a
# container may still refuse it). A write that fails must stop the run with one
# error line naming the file, leave no temporary file and lose nothing.
mount_disk() { mount -t tmpfs -o "size=$1" tmpfs "$disk" 2>"$work/mount.err"; }
if [[ $EUID -ne 0 ]]; then
  echo "skipped the full-disk part: it mounts a tmpfs, which needs root"
elif ! mount_disk 4k; then
  echo "skipped the full-disk part: cannot mount a tmpfs here ($(head -1 "$work/mount.err"))"
else
  umount "$disk"
  # 1. A save runs out of space. The tmpfs holds step 0's two checkpoints and a few pages more, so the first
  #    save of step 1 (its temporary file, beside the file it replaces) cannot be written.
  "$tinygpt" train "${train_flags[@]}" --out "$work/sizes" "${model_flags[@]}" --iters 0 2>/dev/null || fail "disk full: the sizing run failed"
  page=$(getconf PAGESIZE)
  pages=4
  for file in "$work/sizes"/{model,best}.safetensors; do pages=$((pages + ($(stat -c %s "$file") + page - 1) / page)); done
  mount_disk $((pages * page)) || fail "disk full: cannot mount a tmpfs of $pages pages: $(cat "$work/mount.err")"
  "$tinygpt" train "${train_flags[@]}" --out "$disk/run" "${model_flags[@]}" --iters 5 >/dev/null 2>"$work/full.log"
  status=$?
  [[ $status -eq 1 ]] || fail "disk full: exit code $status, expected 1"
  errors=$(grep -c "^tinygpt: error: " "$work/full.log")
  [[ $errors -eq 1 ]] || fail "disk full: expected one error line, got $errors: $(tail -3 "$work/full.log")"
  save_error=$(tail -1 "$work/full.log")
  [[ $save_error =~ ^"tinygpt: error: cannot "[a-z\ ]*" '$disk/run/"(model|best)".safetensors': No space left on device"$ ]] ||
    fail "disk full: the error line does not name the checkpoint and the cause: $save_error"
  [[ -z $(temporary_files "$disk/run") ]] || fail "disk full: temporary files left: $(temporary_files "$disk/run")"
  step=$(checkpoint_step "disk full" "$disk/run/model.safetensors")
  [[ $step -eq 0 ]] || fail "disk full: model.safetensors is at step '$step', expected step 0's"
  checkpoint_step "disk full" "$disk/run/best.safetensors" >/dev/null
  # Room again: the run resumes from step 0's checkpoint and ends with every step in its log.
  mount -o remount,size=64m "$disk" || fail "disk full: cannot grow the tmpfs"
  "$tinygpt" train "${train_flags[@]}" --out "$disk/run" --resume 2>"$work/full_resume.log" ||
    fail "disk full: the resume failed: $(tail -3 "$work/full_resume.log")"
  check_metrics "disk full, then resumed" "$disk/run/metrics.jsonl" 5
  umount "$disk"

  # 2. The metrics log runs out of space (--log on a one-page tmpfs): the line being written is cut short.
  mount_disk "$page" || fail "disk full: cannot mount a tmpfs of one page: $(cat "$work/mount.err")"
  log_run=("$tinygpt" train "${train_flags[@]}" --out "$work/log_run" --log "$disk/metrics.jsonl")
  "${log_run[@]}" "${model_flags[@]}" --iters 100 >/dev/null 2>"$work/full.log"
  status=$?
  [[ $status -eq 1 ]] || fail "full log: exit code $status, expected 1"
  error_line=$(tail -1 "$work/full.log")
  [[ $(grep -c "^tinygpt: error: " "$work/full.log") -eq 1 &&
     $error_line == "tinygpt: error: train: cannot write the metrics log '$disk/metrics.jsonl' (is the disk full?)"* ]] ||
    fail "full log: expected one error line naming the log: $(tail -3 "$work/full.log")"
  [[ -z $(temporary_files "$work/log_run") ]] || fail "full log: temporary files left: $(temporary_files "$work/log_run")"
  step=$(checkpoint_step "full log" "$work/log_run/model.safetensors")
  cut_short=$([[ $(tail -c 1 "$disk/metrics.jsonl") == "" ]] && echo "ends whole" || echo "ends with a line cut short")
  "$tinygpt" plot --metrics "$disk/metrics.jsonl" --out "$work/loss.svg" 2>"$work/plot.log" ||
    fail "full log: tinygpt plot fails on the log ($cut_short): $(cat "$work/plot.log")"
  mount -o remount,size=1m "$disk" || fail "full log: cannot grow the tmpfs"
  "${log_run[@]}" --resume --iters "$((step + 3))" 2>"$work/full_resume.log" ||
    fail "full log: the resume failed: $(tail -3 "$work/full_resume.log")"
  check_metrics "full log, then resumed" "$disk/metrics.jsonl" "$((step + 3))"
  umount "$disk"
  echo "disk full: a save stopped the run with '$save_error'; a full log at step $step ($cut_short) stopped it with" \
    "'$error_line'; both runs resumed when there was room"
fi

finish "crash safety"
