#!/usr/bin/env bash
# Activation checkpointing, measured: the activation memory and step time of GPT
# training without and with it (bench/bench_activation_memory, one process per
# run, since peak memory belongs to a process), and the largest batch that fits
# a memory budget each way.
#
# usage: bash bench/run_activation_memory.sh [compare|fit]
#   compare (the default): ROUNDS rounds of (plain, checkpointed) runs, interleaved
#     so that a busy machine slows both alike, at BATCH x BLOCK; then per mode the
#     median step time and activation memory, and the ratios.
#   fit: per mode, one step at batch FIT_FROM and one at 2 x FIT_FROM give the
#     peak's growth per batch row; the largest batch whose peak stays within
#     BUDGET_MIB is predicted from that straight line, then confirmed by a run at
#     it (stepping down one row at a time while the measured peak is over budget).
#     The peak is reached in the first step (its backward), so one step is enough.
# Settings (environment): CONFIG (gpt2), BATCH (4), BLOCK (1024), STEPS (3), WARMUP (1),
#   ROUNDS (2), THREADS (2), BUDGET_MIB (8192), FIT_FROM (1); BENCH_BUILD_DIR=<dir>
#   runs an existing build instead of building build/release (bench/bench_program.sh).
# On gpt2 at 4 x 1024 a step takes tens of seconds on two cores: `compare` with the
# defaults is about 2 x 2 x 4 steps, `fit` about 2 x 3 runs of one step.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
mode=${1:-compare}
config=${CONFIG:-gpt2}
batch=${BATCH:-4}
block=${BLOCK:-1024}
steps=${STEPS:-3}
warmup=${WARMUP:-1}
rounds=${ROUNDS:-2}
threads=${THREADS:-2}
budget_mib=${BUDGET_MIB:-8192}
fit_from=${FIT_FROM:-1}
# Idle OpenMP threads sleep instead of spinning, so a shared machine's other work
# does not fight spinning threads for the cores.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
program=$(bench_program bench_activation_memory)
results=$(mktemp)
trap 'rm -f "$results"' EXIT

# run_once CHECKPOINTING(0|1) BATCH STEPS WARMUP: one run, its JSON line printed and kept.
run_once() {
  local flag=()
  [[ $1 == 1 ]] && flag=(--checkpoint-activations)
  OMP_NUM_THREADS=$threads "$program" --config "$config" --batch "$2" --block "$block" --steps "$3" \
    --warmup "$4" --threads "$threads" "${flag[@]}" | tee -a "$results"
}

# field NAME: NAME of the last run's JSON line.
field() { tail -n 1 "$results" | python3 -c "import json, sys; print(json.load(sys.stdin)['$1'])"; }

compare() {
  for _ in $(seq "$rounds"); do
    run_once 0 "$batch" "$steps" "$warmup"
    run_once 1 "$batch" "$steps" "$warmup"
  done
  python3 - "$results" <<'PY'
import json, statistics, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
first = runs[0]
print(f"\n{first['config']} ({first['parameters']:,} parameters), batch {first['batch']} x block {first['block']}, "
      f"{first['threads']} threads, {first['cpu']}")
print(f"state (parameters, gradients, AdamW moments: 4 x P x 4 bytes): {first['state_mib']:.0f} MiB; "
      f"baseline = resident memory before the first step: {first['baseline_rss_mib']:.0f} MiB")
print(f"{'mode':<14}{'ms/step':>10}{'peak MiB':>10}{'activation MiB':>16}{'peak - state MiB':>18}{'first loss':>12}")
medians = {}
for checkpointing, name in ((False, "plain"), (True, "checkpointed")):
    mine = [run for run in runs if run["checkpoint_activations"] == checkpointing]
    medians[name] = {key: statistics.median(run[key] for run in mine)
                     for key in ("ms_median", "peak_rss_mib", "activation_mib", "peak_minus_state_mib")}
    m = medians[name]
    print(f"{name:<14}{m['ms_median']:>10.1f}{m['peak_rss_mib']:>10.0f}{m['activation_mib']:>16.0f}"
          f"{m['peak_minus_state_mib']:>18.0f}{mine[0]['first_loss']:>12.6f}")
plain, checkpointed = medians["plain"], medians["checkpointed"]
print(f"activation memory {plain['activation_mib'] / checkpointed['activation_mib']:.2f}x smaller with checkpointing "
      f"(target >= 3x); step time {100 * (checkpointed['ms_median'] / plain['ms_median'] - 1):+.1f}% (target <= +35%)")
print("(medians over rounds of each run's median step; activation = peak - baseline)")
PY
}

mode_name() { if [[ $1 == 1 ]]; then echo checkpointed; else echo plain; fi; }

# largest_batch CHECKPOINTING: the fit for one mode.
largest_batch() {
  local small=$fit_from large=$((2 * fit_from)) peak_small peak_large predicted peak
  run_once "$1" "$small" 1 0 >/dev/null
  peak_small=$(field peak_rss_mib)
  run_once "$1" "$large" 1 0 >/dev/null
  peak_large=$(field peak_rss_mib)
  predicted=$(python3 -c "
small, large, peak_small, peak_large, budget = $small, $large, $peak_small, $peak_large, $budget_mib
per_row = (peak_large - peak_small) / (large - small)
print(max(0, int(small + (budget - peak_small) // per_row)))")
  printf '%s: peak %.0f MiB at batch %d, %.0f MiB at batch %d; predicted largest batch within %d MiB: %d\n' \
    "$(mode_name "$1")" "$peak_small" "$small" "$peak_large" "$large" "$budget_mib" "$predicted"
  batch=$predicted
  while ((batch >= 1)); do
    run_once "$1" "$batch" 1 0 >/dev/null
    peak=$(field peak_rss_mib)
    if python3 -c "import sys; sys.exit(0 if $peak <= $budget_mib else 1)"; then
      printf '%s: batch %d x %d fits: peak %.0f MiB <= %d MiB\n' "$(mode_name "$1")" "$batch" "$block" "$peak" "$budget_mib"
      return
    fi
    printf '%s: batch %d x %d peaks at %.0f MiB, over %d MiB; one row less\n' "$(mode_name "$1")" "$batch" "$block" \
      "$peak" "$budget_mib"
    batch=$((batch - 1))
  done
  echo "$(mode_name "$1"): not even batch 1 x $block fits in $budget_mib MiB"
}

case $mode in
  compare) compare ;;
  fit) largest_batch 0; largest_batch 1 ;;
  *) echo "run_activation_memory.sh: unknown mode '$mode' (compare or fit)" >&2; exit 2 ;;
esac
