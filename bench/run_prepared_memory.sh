#!/usr/bin/env bash
# Training on a prepared corpus takes memory that does not grow with the corpus:
# the token files are read a window at a time (pread) and a batch reads only its windows.
#
# Prepares tiny Shakespeare once (1x) and repeated REPEATS times (char-level,
# uint16: 470 repeats make 1.05 GB of tokens), trains the same small model the
# same number of steps on each, and prints each run's peak resident memory
# (the process's maxrss) beside the size of its token files.
#
# usage: bash bench/run_prepared_memory.sh   (settings from the environment:
#   REPEATS (470), STEPS (50), WORK_DIR (a temporary directory; it needs about
#   1.6 GB free), CORPUS (../shared/data/tinyshakespeare.txt), BENCH_BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
repeats=${REPEATS:-470}
steps=${STEPS:-50}
corpus=${CORPUS:-../shared/data/tinyshakespeare.txt}
[[ -f $corpus ]] || { echo "run_prepared_memory.sh: no corpus at $corpus (set CORPUS)" >&2; exit 1; }
tinygpt=$(bench_tinygpt)
work=${WORK_DIR:-$(mktemp -d)}
trap 'rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}

cp "$corpus" "$work/small.txt"
for _ in $(seq "$repeats"); do cat "$corpus"; done >"$work/large.txt"

# peak_of COMMAND...: runs it (its output to $LOG) and prints its peak resident memory in MiB.
peak_of() {
  python3 - "$@" <<'PY'
import os, resource, subprocess, sys
with open(os.environ["LOG"], "w") as log:
    subprocess.run(sys.argv[1:], check=True, stdout=log, stderr=log)
print(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
PY
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; $steps steps of cpu-small"
printf '%-8s %10s %12s %10s %16s\n' corpus "text MB" "tokens (M)" "bins MB" "train peak MiB"
for size in small large; do
  LOG="$work/prepare-$size.log" peak_of "$tinygpt" prepare --data "$work/$size.txt" --tokenizer char \
    --out "$work/$size" >/dev/null
  peak=$(LOG="$work/train-$size.log" peak_of "$tinygpt" train --data "$work/$size" --config cpu-small \
    --iters "$steps" --eval-interval "$steps" --eval-iters 5 --out "$work/run-$size")
  python3 - "$work" "$size" "$peak" <<'PY'
import json, os, sys
work, size, peak = sys.argv[1:]
meta = json.load(open(f"{work}/{size}/meta.json"))
tokens = meta["train"]["tokens"] + meta["val"]["tokens"]
bins = sum(os.path.getsize(f"{work}/{size}/{name}") for name in ("train.bin", "val.bin"))
print(f"{size:<8} {os.path.getsize(f'{work}/{size}.txt') / 1e6:>10.1f} {tokens / 1e6:>12.1f} {bins / 1e6:>10.1f} {peak:>16}")
PY
done
