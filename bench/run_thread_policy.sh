#!/usr/bin/env bash
# How the OpenMP wait policy behaves on an idle machine and beside one other
# busy process (a shell loop on one core), as a new user would meet it:
#
#   tinygpt    the program's own choice: its spin count (tensor/runtime/process_environment.h)
#              and one thread fewer while another process keeps a CPU busy
#              (tensor/runtime/thread_governor.h)
#   fixed      the same with the thread count fixed (TINYGPT_THREADS=fixed)
#   default    libgomp's default (spin 300,000 times before sleeping): TINYGPT_ENVIRONMENT=keep
#   passive    OMP_WAIT_POLICY=PASSIVE (sleep at once)
# (default and passive keep the governor.)
#
# on four jobs: training cpu-small (median ms per step, steps 10-40 of 40),
# eval of 200,000 characters (tokens/s), sampling 500 tokens from cpu-small
# (context 64: past it every token re-reads the window) and 1,000 tokens from
# a baby-sized model with a 1,024-token context (every token one step through
# the KV cache), in seconds. Every policy uses the same OpenBLAS kernels (the
# ones tinygpt picks), so only the wait policy differs. Runs interleave
# policies within a round, rounds repeat; the table gives medians and each
# policy's busy / idle ratio.
#   bash bench/run_thread_policy.sh [rounds=3]
# AS_AVX2=1 runs everything as tinygpt runs on a CPU without AVX-512: its AVX2
# kernels (TINYGPT_ISA=avx2) and OpenBLAS's Haswell kernels.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
rounds="${1:-3}"
tinygpt=$(bench_tinygpt)
corpus=$(bash scripts/data.sh 2>/dev/null | tail -1)
[[ -f $corpus ]] || corpus=../shared/data/tinyshakespeare.txt
work=$(mktemp -d)
busy_pid=""
trap '[[ -n $busy_pid ]] && kill $busy_pid 2>/dev/null; rm -rf "$work"' EXIT

# The BLAS kernels tinygpt would run with, for every policy alike.
blas_core=$(env -u TINYGPT_ENVIRONMENT "$tinygpt" --version | sed -n 's/.*OpenBLAS kernels \([A-Za-z]*\).*/\1/p')
if [[ ${AS_AVX2:-0} == 1 ]]; then
  blas_core=Haswell
  export TINYGPT_ISA=avx2 TINYGPT_ENVIRONMENT=keep  # keep: tinygpt would otherwise pick the AVX-512 kernels
  echo "as on a CPU without AVX-512: TINYGPT_ISA=avx2, OpenBLAS's Haswell kernels" >&2
fi
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores; OpenBLAS kernels $blas_core" >&2

# A model to evaluate and sample from.
"$tinygpt" train --data "$corpus" --iters 50 --warmup 10 --eval-interval 1000 --eval-iters 1 --out "$work/model" >/dev/null 2>&1
"$tinygpt" train --data "$corpus" --config baby --block-size 1024 --batch-size 1 --iters 2 --eval-interval 1000 \
  --eval-iters 1 --out "$work/long" >/dev/null 2>&1
head -c 200000 "$corpus" >"$work/eval.txt"

run_policy() {  # POLICY COMMAND...: the command under that policy
  local policy=$1
  shift
  case $policy in
    tinygpt)
      if [[ ${AS_AVX2:-0} == 1 ]]; then  # what it sets there (tensor/runtime/process_environment.h): nothing
        env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u TINYGPT_THREADS TINYGPT_ENVIRONMENT=keep OPENBLAS_CORETYPE=Haswell "$@"
      else
        env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u TINYGPT_ENVIRONMENT -u TINYGPT_THREADS "$@"
      fi ;;
    fixed)
      if [[ ${AS_AVX2:-0} == 1 ]]; then
        env -u OMP_WAIT_POLICY TINYGPT_ENVIRONMENT=keep OPENBLAS_CORETYPE=Haswell GOMP_SPINCOUNT=500 TINYGPT_THREADS=fixed "$@"
      else
        env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u TINYGPT_ENVIRONMENT TINYGPT_THREADS=fixed "$@"
      fi ;;
    default) env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT TINYGPT_ENVIRONMENT=keep OPENBLAS_CORETYPE="$blas_core" "$@" ;;
    passive) env -u GOMP_SPINCOUNT OMP_WAIT_POLICY=PASSIVE OPENBLAS_CORETYPE="$blas_core" "$@" ;;
  esac
}

measure() {  # POLICY LOAD: one line of JSON with the three jobs' figures
  local policy=$1 load=$2 started ended
  rm -rf "$work/run"
  run_policy "$policy" "$tinygpt" train --data "$corpus" --iters 40 --warmup 10 --eval-interval 1000 --eval-iters 1 \
    --out "$work/run" >/dev/null 2>&1
  local eval_line
  eval_line=$(run_policy "$policy" "$tinygpt" eval --ckpt "$work/model" --data "$work/eval.txt" 2>&1 | grep -i "tokens/s" | tail -1)
  started=$(date +%s.%N)
  run_policy "$policy" "$tinygpt" sample --ckpt "$work/model" --tokens 500 >/dev/null 2>&1
  ended=$(date +%s.%N)
  local long_started long_ended
  long_started=$(date +%s.%N)
  run_policy "$policy" "$tinygpt" sample --ckpt "$work/long" --tokens 1000 >/dev/null 2>&1
  long_ended=$(date +%s.%N)
  /usr/bin/python3 - "$work/run/metrics.jsonl" "$policy" "$load" "$eval_line" "$started" "$ended" "$long_started" \
    "$long_ended" <<'PY'
import json, re, statistics, sys
path, policy, load, eval_line, started, ended, long_started, long_ended = sys.argv[1:]
steps = [json.loads(l)["step_ms"] for l in open(path) if '"step_ms"' in l][1:]
rate = re.search(r"([0-9][0-9,]*) tokens/s", eval_line)
print(json.dumps({"policy": policy, "load": load, "train_ms": statistics.median(steps),
                  "eval_tokens_per_s": float(rate.group(1).replace(",", "")) if rate else None,
                  "sample_s": float(ended) - float(started),
                  "sample_long_s": float(long_ended) - float(long_started)}))
PY
}

for round in $(seq 1 "$rounds"); do
  for load in idle busy; do
    if [[ $load == busy ]]; then
      bash -c 'while :; do :; done' &
      busy_pid=$!
    fi
    for policy in tinygpt fixed default passive; do
      echo "round $round/$rounds: $load, $policy" >&2
      measure "$policy" "$load" >>"$work/results.jsonl"
    done
    if [[ -n $busy_pid ]]; then
      kill "$busy_pid"
      wait "$busy_pid" 2>/dev/null || true
      busy_pid=""
    fi
  done
done

/usr/bin/python3 - "$work/results.jsonl" "$rounds" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[r["policy"], r["load"]].append(r)
def median(policy, load, key):
    values = [r[key] for r in runs[policy, load] if r[key] is not None]
    return statistics.median(values) if values else float("nan")
print(f"medians of {sys.argv[2]} rounds; busy = beside one other process spinning on one core")
print(f"{'policy':<9}{'train ms/step':>26}{'eval tokens/s':>30}{'sample 500 tokens, s':>30}{'1000, context 1024, s':>30}")
print(f"{'':<9}" + "".join(f"{'idle':>9}{'busy':>9}{'ratio':>8}" + " " * (30 - 26 if i else 0) for i in range(4)))
for policy in ("tinygpt", "fixed", "default", "passive"):
    cells = ""
    for i, (key, slower_is_larger) in enumerate((("train_ms", True), ("eval_tokens_per_s", False), ("sample_s", True),
                                                     ("sample_long_s", True))):
        idle, busy = median(policy, "idle", key), median(policy, "busy", key)
        ratio = busy / idle if slower_is_larger else idle / busy
        cells += (" " * 4 if i else "") + f"{idle:>9.1f}{busy:>9.1f}{ratio:>7.2f}x"
    print(f"{policy:<9}{cells}")
print("ratio: how many times slower when busy (for eval: idle tokens/s over busy tokens/s)")
PY
