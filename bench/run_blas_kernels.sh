#!/usr/bin/env bash
# OpenBLAS's kernel sets side by side on this CPU: one GPT training step
# (bench_train_step) and one prompt's forward (bench_gpt2_inference) with each
# OPENBLAS_CORETYPE in turn, round after round (interleaved, so that a machine's
# drift falls on all alike), then the median, range and ratio to the first set.
# What tinygpt chooses by itself, and why, is in its runtime line
# (tensor/runtime/process_environment.h); this measures whether the choice is right.
#
# usage: bash bench/run_blas_kernels.sh [BUILD_DIR] [ROUNDS]
#   BUILD_DIR defaults to build/release, ROUNDS to 5. KERNELS ("Cooperlake Zen Haswell"; the first
#   is the baseline), CONFIG (gpt2), BATCH (4), BLOCK (64), ITERS (5), PROMPT (64), THREADS (2).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build/release}
rounds=${2:-5}
kernels=${KERNELS:-Cooperlake Zen Haswell}
config=${CONFIG:-gpt2}
threads=${THREADS:-2}
results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//') (family $(grep -m1 "^cpu family" /proc/cpuinfo | cut -d: -f2 | tr -d " ")), $threads threads"
echo "tinygpt's own choice: $("$build_dir/cli/tinygpt" --version | grep '^runtime:' | grep -o 'OpenBLAS kernels [^;]*')"
for round in $(seq "$rounds"); do
  for kernel in $kernels; do
    step=$(OPENBLAS_CORETYPE=$kernel OMP_NUM_THREADS=$threads "$build_dir/bench/bench_train_step" --config "$config" \
      --batch "${BATCH:-4}" --block "${BLOCK:-64}" --iters "${ITERS:-5}" --warmup 2 | tail -1)
    forward=$(OPENBLAS_CORETYPE=$kernel OMP_NUM_THREADS=$threads "$build_dir/bench/bench_gpt2_inference" --config "$config" \
      --prompt "${PROMPT:-64}" --modes forward --forward-iters 5 --threads "$threads" | tail -1)
    echo "{\"kernel\": \"$kernel\", \"step\": $step, \"forward\": $forward}" >>"$results"
  done
done
python3 - "$results" $kernels <<'PY'
import json, statistics, sys
records, kernels = [json.loads(line) for line in open(sys.argv[1])], sys.argv[2:]
def values(kernel, pick):
    return [pick(r) for r in records if r["kernel"] == kernel]
rows = [("train step ms (median of its steps)", lambda r: r["step"]["ms_median"]),
        ("prompt forward ms", lambda r: r["forward"]["forward"]["ms"])]
print(f"{len(records) // len(kernels)} rounds; median (min-max) per process; ratio: the first kernel set's median over this one's (> 1: faster)")
for label, pick in rows:
    base = statistics.median(values(kernels[0], pick))
    print(label)
    for kernel in kernels:
        v = values(kernel, pick)
        print(f"  {kernel:<12}{statistics.median(v):10.1f} ({min(v):.1f}-{max(v):.1f}){base / statistics.median(v):8.3f}x")
PY
