#!/usr/bin/env bash
# Batch-1 inference of the gpt2 (124M) shape with float32, bfloat16 and int8
# weights (nn/quantize.h), from the same randomly initialised weights: the
# decode rate with the KV cache after a 64-token prompt, the prompt's prefill
# and one forward over it.
#
# This machine drifts between a fast and a slow memory state within seconds,
# so the three formats live in one process and take turns generation by
# generation (bench_gpt2_inference --weight-format float32,bf16,int8): each
# ratio over float32 is taken between neighbouring runs, then the median of
# those ratios is printed beside the medians of the rates. ROUNDS processes,
# RUNS turns each.
#
# usage: bench/run_quantized_inference.sh [BUILD_DIR] [ROUNDS]
#   BUILD_DIR defaults to build (it must hold bench/bench_gpt2_inference), ROUNDS to 3.
#   RUNS (5), THREADS (2), CONFIG (gpt2), PROMPT (64), TOKENS (64), POLICIES ("default passive").
set -euo pipefail

project_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$project_root/build}
rounds=${2:-3}
runs=${RUNS:-5}
threads=${THREADS:-2}
config=${CONFIG:-gpt2}
prompt=${PROMPT:-64}
tokens=${TOKENS:-64}
policies=${POLICIES:-default passive}
ours=$build_dir/bench/bench_gpt2_inference
[[ -x $ours ]] || { echo "run_quantized_inference.sh: $ours not found (build the bench_gpt2_inference target)" >&2; exit 1; }

results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $threads threads"
# Each round runs every wait policy in turn: "default" is what the tinygpt program
# runs with (libgomp's spin, the thread count following the load), "passive"
# sleeps idle threads at once (OMP_WAIT_POLICY=PASSIVE).
for round in $(seq "$rounds"); do
  for policy in $policies; do
    case $policy in
      default) policy_env=(env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT) ;;
      passive) policy_env=(env OMP_WAIT_POLICY=PASSIVE) ;;
      *) echo "run_quantized_inference.sh: POLICIES lists default and/or passive, got $policy" >&2; exit 2 ;;
    esac
    "${policy_env[@]}" OMP_NUM_THREADS="$threads" "$ours" --config "$config" --prompt "$prompt" --tokens "$tokens" \
      --threads "$threads" --modes forward,cached --cached-runs "$runs" --forward-iters "$runs" \
      --weight-format float32,bf16,int8 | sed "s/^{/{\"policy\": \"$policy\", /" >>"$results"
  done
done

python3 - "$results" <<'PY'
import collections, json, statistics, sys
by_policy = collections.defaultdict(lambda: collections.defaultdict(list))  # policy -> format -> records
for line in open(sys.argv[1]):
    record = json.loads(line)
    by_policy[record["policy"]][record["weights"]].append(record)

def runs(format, mode, field):
    return [value for record in rounds[format] for value in record[mode]["runs"][field]]

def paired(format, mode, field, faster_is_larger):
    # the ratio of each run to float32's run beside it (> 1: faster than float32)
    ours, base = runs(format, mode, field), runs("float32", mode, field)
    return [a / b if faster_is_larger else b / a for a, b in zip(ours, base)]

for policy, rounds in by_policy.items():
    print(f"\nidle threads: {policy}")
    count = len(runs("float32", "cached", "decode_tokens_per_s"))
    print(f"{len(rounds['float32'])} processes x {count // len(rounds['float32'])} turns; medians of rates, and of "
          "the run-by-run ratios to float32 (min-max)")
    print(f"{'weights':<10}{'decode tok/s':>13}{'(range)':>13}{'x f32':>7}{'(range)':>13}{'prefill ms':>12}{'x f32':>7}{'forward ms':>12}{'x f32':>7}")
    for format in ["float32", "bfloat16", "int8"]:
        decode, rates = paired(format, "cached", "decode_tokens_per_s", True), runs(format, "cached", "decode_tokens_per_s")
        print(f"{format:<10}{statistics.median(rates):>13.1f}{f'({min(rates):.0f}-{max(rates):.0f})':>13}"
              f"{statistics.median(decode):>7.2f}{f'({min(decode):.2f}-{max(decode):.2f})':>13}"
              f"{statistics.median(runs(format, 'cached', 'prefill_ms')):>12.1f}"
              f"{statistics.median(paired(format, 'cached', 'prefill_ms', False)):>7.2f}"
              f"{statistics.median(runs(format, 'forward', 'ms')):>12.1f}"
              f"{statistics.median(paired(format, 'forward', 'ms', False)):>7.2f}")
PY
