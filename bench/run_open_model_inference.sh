#!/usr/bin/env bash
# Batch-1 inference of a SmolLM2-135M-shaped model read from the Hugging Face
# layout (random weights in the real names, shapes and BF16 dtype, written by
# bench_gpt2_inference --save-hf), beside GPT-2 124M (a preset, not loaded), in
# float32, bf16 and int8: the time to load the directory, the prefill of a
# 64-token prompt and the decode rate of 32 greedy tokens through the KV cache.
# Rounds alternate the two models, each its own process; medians and ranges
# over rounds are printed.
#
# usage: bench/run_open_model_inference.sh [BUILD_DIR] [ROUNDS]
#   BUILD_DIR defaults to build/release, ROUNDS to 3; THREADS (2), PROMPT (64), TOKENS (32).
set -euo pipefail

project_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$project_root/build/release}
rounds=${2:-3}
threads=${THREADS:-2}
prompt=${PROMPT:-64}
tokens=${TOKENS:-32}
bench=$build_dir/bench/bench_gpt2_inference
[[ -x $bench ]] || { echo "run_open_model_inference.sh: $bench not found (build the bench_gpt2_inference target)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$bench" --config smollm2-135m --save-hf "$work/smollm2" >/dev/null
common=(--prompt "$prompt" --tokens "$tokens" --threads "$threads" --modes cached --cached-runs 3
        --weight-format float32,bf16,int8)
for round in $(seq "$rounds"); do
  OMP_NUM_THREADS=$threads "$bench" --weights "$work/smollm2" "${common[@]}" | sed 's/^{/{"model":"smollm2-135m (loaded)",/' >>"$work/results.jsonl"
  OMP_NUM_THREADS=$threads "$bench" --config gpt2 "${common[@]}" | sed 's/^{/{"model":"gpt2 (preset)",/' >>"$work/results.jsonl"
done
python3 - "$work/results.jsonl" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"CPU: {sys.argv[2]}; {len(rows) // 6} rounds; medians (min-max)")
print(f"{'model':24} {'weights':9} {'load ms':>16} {'prefill ms':>18} {'decode tok/s':>18} {'peak RSS MB':>12}")
def spread(values):
    return f"{statistics.median(values):7.1f} ({min(values):.0f}-{max(values):.0f})"
for model in dict.fromkeys(r["model"] for r in rows):
    for weights in ("float32", "bfloat16", "int8"):
        group = [r for r in rows if r["model"] == model and r["weights"] == weights]
        load = spread([r["load_ms"] for r in group]) if "load_ms" in group[0] else "-"
        prefill = spread([r["cached"]["prefill_ms"] for r in group])
        decode = spread([r["cached"]["decode_tokens_per_s"] for r in group])
        rss = statistics.median(r["peak_rss_mb"] for r in group)
        print(f"{model:24} {weights:9} {load:>16} {prefill:>18} {decode:>18} {rss:12.0f}")
PY
