#!/usr/bin/env bash
# Fine-tuning's peak memory and step time: every weight trained (AdamW over all
# of them) against LoRA of rank 8 on every linear (float32 base) and QLoRA (the
# base held in int8), on GPT-2's 124M shape and a 135M Llama shape
# (smollm2-135m's blocks with GPT-2's vocabulary), at batch 4 x 256 tokens.
#
# Each shape gets a base checkpoint (random weights: memory and time do not
# depend on them); then ROUNDS rounds each run the three settings one after
# another (interleaved, so drift reaches all alike) for STEPS steps. Printed per
# setting: the peak resident memory of the whole process (ru_maxrss: loading,
# training and the checkpoints it writes), its ratio to full fine-tuning's, the
# median ms/step over every round's steps after the first (with the range of the
# rounds' medians) and full fine-tuning's step time over it.
#
# usage: bash bench/run_lora_memory.sh   (settings from the environment:
#   SHAPES ("gpt2 smollm2-135m"), STEPS (6), ROUNDS (3), RANK (8), CHECKPOINT (0; 1: every
#   setting with --checkpoint-activations), WORK_DIR, CORPUS (../shared/data/tinyshakespeare.txt),
#   BENCH_BUILD_DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
shapes=${SHAPES:-"gpt2 smollm2-135m"}
steps=${STEPS:-6}
rounds=${ROUNDS:-3}
rank=${RANK:-8}
checkpoint=${CHECKPOINT:-0}
corpus=${CORPUS:-../shared/data/tinyshakespeare.txt}
[[ -f $corpus ]] || { echo "run_lora_memory.sh: no corpus at $corpus (set CORPUS)" >&2; exit 1; }
tinygpt=$(bench_tinygpt)
work=${WORK_DIR:-$(mktemp -d)}
trap 'rm -rf "$work"' EXIT

# run_measured LOG COMMAND...: runs it (output to LOG) and prints its peak resident memory in MiB.
run_measured() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "w") as log:
    subprocess.run(sys.argv[2:], check=True, stdout=log, stderr=log)
print(f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f}")
PY
}

settings=(full lora qlora)
flags_of() {
  [[ $checkpoint == 1 ]] && echo -n "--checkpoint-activations "
  case $1 in
    full) echo "" ;;
    lora) echo "--lora-rank $rank --lora-targets all-linear" ;;
    qlora) echo "--lora-rank $rank --lora-targets all-linear --lora-base int8" ;;
  esac
}

echo "machine: $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed "s/^ //"), $(nproc) cores"
echo "batch 4 x 256 tokens, $steps steps a run, $rounds rounds interleaved; LoRA rank $rank on every linear$([[ $checkpoint == 1 ]] && echo "; activation checkpointing in every setting")"
for shape in $shapes; do
  "$tinygpt" train --config "$shape" --tokenizer gpt2 --data "$corpus" --block-size 256 --batch-size 4 --iters 0 \
    --eval-iters 1 --out "$work/base-$shape" >"$work/base-$shape.log" 2>&1 \
    || { echo "run_lora_memory.sh: the $shape base failed: $(tail -3 "$work/base-$shape.log")" >&2; exit 1; }
  for round in $(seq "$rounds"); do
    for setting in "${settings[@]}"; do
      out="$work/$shape-$setting-$round"
      # shellcheck disable=SC2046
      peak=$(run_measured "$out.log" "$tinygpt" train --init-from "$work/base-$shape" --data "$corpus" --batch-size 4 \
        --block-size 256 --iters "$steps" --eval-interval "$steps" --eval-iters 1 --log "$out.jsonl" --out "$out" \
        $(flags_of "$setting"))
      echo "$shape $setting $round $peak" >>"$work/peaks.txt"
      rm -rf "$out"
    done
  done
done
python3 - "$work" "$shapes" "$rounds" <<'PY'
import json, statistics, sys
work, shapes, rounds = sys.argv[1], sys.argv[2].split(), int(sys.argv[3])
peaks = {}
for line in open(f"{work}/peaks.txt"):
    shape, setting, round_, peak = line.split()
    peaks.setdefault((shape, setting), []).append(float(peak))
def step_ms(shape, setting, round_):
    lines = [json.loads(l) for l in open(f"{work}/{shape}-{setting}-{round_}.jsonl")]
    return [l["step_ms"] for l in lines if "step_ms" in l][1:]  # the first step warms up
print(f"{'shape':<14} {'setting':<7} {'peak MiB':>9} {'of full':>8} {'ms/step':>9} {'range of rounds':>18} {'speed-up':>9}")
for shape in shapes:
    full_ms = statistics.median([ms for r in range(1, rounds + 1) for ms in step_ms(shape, "full", r)])
    full_peak = max(peaks[(shape, "full")])
    for setting in ("full", "lora", "qlora"):
        per_round = [statistics.median(step_ms(shape, setting, r)) for r in range(1, rounds + 1)]
        ms = statistics.median([ms for r in range(1, rounds + 1) for ms in step_ms(shape, setting, r)])
        peak = max(peaks[(shape, setting)])
        print(f"{shape:<14} {setting:<7} {peak:>9.0f} {100 * peak / full_peak:>7.0f}% {ms:>9.0f} "
              f"{min(per_round):>8.0f}-{max(per_round):<9.0f} {full_ms / ms:>8.2f}x")
PY
