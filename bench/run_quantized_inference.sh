#!/usr/bin/env bash
# Batch-1 inference of the gpt2 (124M) shape with float32, bfloat16 and int8
# weights (nn/quantize.h), on the same randomly initialised model: the decode
# rate with the KV cache after a 64-token prompt, the prompt's prefill and one
# forward over it. The three formats run in turn, each its own process, round
# after round, so a machine drifting between a fast and a slow state slows all
# three alike; prints each run's JSON line, then the medians and each format's
# speed over float32's (> 1: faster).
#
# usage: bench/run_quantized_inference.sh [BUILD_DIR] [ROUNDS]
#   BUILD_DIR defaults to build (it must hold bench/bench_gpt2_inference), ROUNDS to 5.
#   THREADS (2), CONFIG (gpt2), PROMPT (64), TOKENS (64).
set -euo pipefail

project_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$project_root/build}
rounds=${2:-5}
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
threads=${THREADS:-2}
config=${CONFIG:-gpt2}
prompt=${PROMPT:-64}
tokens=${TOKENS:-64}
ours=$build_dir/bench/bench_gpt2_inference
[[ -x $ours ]] || { echo "run_quantized_inference.sh: $ours not found (build the bench_gpt2_inference target)" >&2; exit 1; }

results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $threads threads"
for round in $(seq "$rounds"); do
  for format in float32 bf16 int8; do
    OMP_NUM_THREADS=$threads "$ours" --config "$config" --prompt "$prompt" --tokens "$tokens" --threads "$threads" \
      --modes forward,cached --weight-format "$format" | tee -a "$results"
  done
done

python3 - "$results" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    record = json.loads(line)
    runs[record["weights"]].append(record)

def med(format, mode, field):
    return statistics.median(record[mode][field] for record in runs[format])

print(f"\n{'weights':<10}{'decode tok/s':>14}{'x f32':>8}{'prefill ms':>12}{'x f32':>8}{'forward ms':>12}{'x f32':>8}")
for format in ["float32", "bfloat16", "int8"]:
    decode, prefill, forward = med(format, "cached", "decode_tokens_per_s"), med(format, "cached", "prefill_ms"), med(format, "forward", "ms")
    print(f"{format:<10}{decode:>14.1f}{decode / med('float32', 'cached', 'decode_tokens_per_s'):>8.2f}"
          f"{prefill:>12.1f}{med('float32', 'cached', 'prefill_ms') / prefill:>8.2f}"
          f"{forward:>12.1f}{med('float32', 'forward', 'ms') / forward:>8.2f}")
PY
