#!/usr/bin/env bash
# Batch-1 inference of the gpt2 (124M) shape, tinygpt against PyTorch on the same
# randomly initialised weights: the forward of a 64-token prompt, and greedy
# generation of 32 new tokens after it with and without a KV cache (ours also
# with the fused decode step off, GPT::set_fused_decode(false), for comparison). Runs are
# interleaved (ours, torch, ours, ...), each its own process, so that a busy
# machine slows both sides alike. Prints each run's JSON line, then the medians
# over rounds and the torch/ours ratios (> 1: we are faster), and checks that
# both sides generated the same greedy tokens.
#
# usage: bench/run_gpt2_inference.sh [BUILD_DIR] [ROUNDS]
#   BUILD_DIR defaults to build (it must hold bench/bench_gpt2_inference), ROUNDS to 5.
#   PYTHON (default /usr/bin/python3, Debian's, which has torch 1.13), THREADS (2),
#   CONFIG (gpt2), PROMPT (64), TOKENS (32), WAIT_POLICY (default, or passive).
set -euo pipefail

project_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$project_root/build}
rounds=${2:-5}
python=${PYTHON:-/usr/bin/python3}
# Both sides as their users run them: libgomp's default wait policy (and ours
# with the thread count following the load, as the tinygpt program has it).
# WAIT_POLICY=passive makes idle threads sleep at once on both sides instead,
# what a busy shared machine may need; it costs decoding (docs/performance.md).
case "${WAIT_POLICY:-default}" in
  default) unset OMP_WAIT_POLICY GOMP_SPINCOUNT ;;
  passive) export OMP_WAIT_POLICY=PASSIVE ;;
  *) echo "run_gpt2_inference.sh: WAIT_POLICY is default or passive" >&2; exit 2 ;;
esac
threads=${THREADS:-2}
config=${CONFIG:-gpt2}
prompt=${PROMPT:-64}
tokens=${TOKENS:-32}
ours=$build_dir/bench/bench_gpt2_inference
[[ -x $ours ]] || { echo "run_gpt2_inference.sh: $ours not found (build the bench_gpt2_inference target)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
weights=$work/weights.safetensors
results=$work/results.jsonl
common=(--tokens "$tokens" --threads "$threads")
"$ours" --config "$config" --prompt "$prompt" --tokens "$tokens" --save-weights "$weights"

for round in $(seq "$rounds"); do
  OMP_NUM_THREADS=$threads "$ours" --config "$config" --prompt "$prompt" "${common[@]}" \
    --modes forward,cached,cached_modules,uncached | tee -a "$results"
  OMP_NUM_THREADS=$threads "$python" "$project_root/bench/torch_gpt2_inference.py" --weights "$weights" "${common[@]}" \
    | tee -a "$results"
done

"$python" - "$results" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    runs[json.loads(line)["side"]].append(json.loads(line))
ours, torch = runs["tinygpt"], runs["torch"]

def med(records, mode, field):
    return statistics.median(record[mode][field] for record in records)

def ours_mode(mode):  # our figure in this row may come from another of our modes
    return mode.split("/")[0]

def torch_mode(mode):
    return mode.split("/")[-1]

first = ours[0]
print(f"\n{first['config']} ({first['parameters'] / 1e6:.0f}M), batch 1, prompt {first['prompt']}, "
      f"{first['new_tokens']} new tokens (greedy), {first['threads']} threads; medians of {len(ours)} rounds")
print(f"{'':34} {'tinygpt':>10} {'torch':>10} {'torch/ours':>11}")
rows = [("forward 1x%d ms" % first["prompt"], "forward", "ms", False),
        ("forward tokens/s", "forward", "tokens_per_s", True),
        ("cached decode tokens/s", "cached", "decode_tokens_per_s", True),
        ("  module by module (not fused)", "cached_modules/cached", "decode_tokens_per_s", True),
        ("cached tokens/s incl. prefill", "cached", "tokens_per_s_with_prefill", True),
        ("cached prefill ms", "cached", "prefill_ms", False),
        ("uncached decode tokens/s", "uncached", "decode_tokens_per_s", True),
        ("uncached tokens/s incl. prefill", "uncached", "tokens_per_s_with_prefill", True)]
for label, mode, field, rate in rows:
    a, b = med(ours, ours_mode(mode), field), med(torch, torch_mode(mode), field)
    # The ratio reads as our speed-up either way: a rate over torch's, or torch's time over ours.
    print(f"{label:34} {a:10.1f} {b:10.1f} {(a / b if rate else b / a):10.2f}x")
print("(torch/ours > 1: tinygpt is faster)")

print(f"forward last logits, tinygpt {ours[0]['forward']['last_logits_head']}")
print(f"                     torch   {torch[0]['forward']['last_logits_head']}")
failed = False
for mode in ("cached", "uncached"):
    tokens = {tuple(record[mode]["tokens"]) for record in ours + torch}
    tokens |= {tuple(record["cached_modules"]["tokens"]) for record in ours} if mode == "cached" else set()
    print(f"greedy tokens {mode}: {'same on both sides' if len(tokens) == 1 else 'DIFFER'} {list(next(iter(tokens)))[:8]}...")
    failed |= len(tokens) != 1
sys.exit(1 if failed else 0)
PY
