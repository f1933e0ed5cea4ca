#!/usr/bin/env bash
# The speedrun's ablation (docs/speedrun.md): every change the speedrun recipe makes to
# nanoGPT's recipe, alone and together, each trained for the same wall-clock budget
# and scored on the whole validation split, so that a reader sees what each change buys.
#
# A fixed budget means a fixed number of steps per setting: a short probe measures
# each setting's ms/step on this machine, and its steps are the budget over that.
# Every schedule is fitted to its steps (warmup the recipe's fraction of them, the
# decay ending at the last), as each recipe would be if it were written for that budget.
# The budget counts training steps; the final evaluation is outside it.
#
# usage: bench/run_speedrun_ablation.sh [OUT_DIR] [-- extra train flags for every setting]
#   OUT_DIR  bench/out/speedrun_ablation (default): a run per setting, ablation.jsonl, the table
# MINUTES (10: the budget), THREADS (2), PROBE_STEPS (5: timed after one warm-up step),
# ONLY (a setting's name: run that one alone). bf16 needs AVX512-BF16; without it its rows are skipped.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/bench_program.sh

out_dir=${1:-bench/out/speedrun_ablation}
shift $(( $# >= 1 ? 1 : 0 ))
[[ "${1:-}" == "--" ]] && shift
minutes=${MINUTES:-10}
threads=${THREADS:-2}
probe_steps=${PROBE_STEPS:-5}
data=$(bash scripts/data.sh)
tinygpt=$(bench_tinygpt)
has_bf16=$(grep -qw avx512_bf16 /proc/cpuinfo && echo yes || echo no)
mkdir -p "$out_dir"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $threads threads;" \
  "AVX512-BF16: $has_bf16; budget: $minutes minutes of training steps per setting"

baseline=recipes/shakespeare_char.toml
speedrun=recipes/shakespeare_speedrun.toml
# name | recipe | warmup as a fraction of the steps | flags
settings=(
  "nanoGPT's recipe|$baseline|0.02|"
  "+ Llama block|$baseline|0.02|--positional rope --norm rmsnorm --mlp swiglu --bias none"
  "+ Muon|$baseline|0.02|--optimizer muon --muon-lr 0.02 --lr 2e-3"
  "+ bf16 products|$baseline|0.02|--dtype bf16"
  "+ WSD, batch 32, dropout 0.1|$baseline|0.0625|--schedule wsd --cooldown 0.4 --min-lr 0 --batch-size 32 --dropout 0.1"
  "speedrun recipe (all)|$speedrun|0.0625|--dtype bf16"
  "speedrun recipe in float32|$speedrun|0.0625|"
)

# median of a run's step_ms, skipping its first (warm-up) step
median_step_ms() {
  python3 -c '
import json, statistics, sys
ms = [r["step_ms"] for r in map(json.loads, open(sys.argv[1])) if "step_ms" in r][1:]
print(statistics.median(ms))' "$1/metrics.jsonl"
}

results=$out_dir/ablation.jsonl
[[ -n ${ONLY:-} ]] || : > "$results"
for setting in "${settings[@]}"; do
  IFS='|' read -r name recipe warmup_fraction flags <<< "$setting"
  [[ -z ${ONLY:-} || $ONLY == "$name" ]] || continue
  if [[ $flags == *bf16* && $has_bf16 == no ]]; then echo "skipped (no AVX512-BF16): $name"; continue; fi
  slug=$(echo "$name" | tr -c 'A-Za-z0-9\n' '_' | sed 's/__*/_/g; s/^_//; s/_$//')
  read -ra extra <<< "$flags"
  common=(--config-file "$recipe" --data "$data" --threads "$threads" --overwrite "${extra[@]}" "$@")

  probe=$out_dir/$slug.probe
  "$tinygpt" train "${common[@]}" --out "$probe" --iters $((probe_steps + 1)) --warmup 1 --eval-iters 1 \
    --eval-interval 1000000 > "$probe.log" 2>&1
  step_ms=$(median_step_ms "$probe")
  iters=$(python3 -c "print(max(10, int($minutes * 60000 / $step_ms)))")
  warmup=$(python3 -c "print(max(1, round($iters * $warmup_fraction)))")
  rm -rf "$probe" "$probe.log"

  run=$out_dir/$slug
  echo "$name: probe $step_ms ms/step -> $iters steps (warmup $warmup)"
  "$tinygpt" train "${common[@]}" --out "$run" --iters "$iters" --warmup "$warmup" --decay-iters "$iters" \
    --eval-interval "$iters" --eval-iters 4 --eval-whole-val 1 > "$out_dir/$slug.log" 2>&1
  python3 - "$name" "$run/metrics.jsonl" "$iters" "$(median_step_ms "$run")" >> "$results" <<'EOF'
import json, sys
name, path, iters, median_step_ms = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
rows = [json.loads(line) for line in open(path)]
final = [r for r in rows if r.get("eval")][-1]
print(json.dumps({"setting": name, "steps": iters, "train_minutes": sum(r.get("step_ms", 0) for r in rows) / 60000,
                  "median_step_ms": median_step_ms, "val_loss": final["val_loss"]}))
EOF
  tail -n1 "$results"
done

python3 - "$results" <<'EOF'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"\n| setting | steps | ms/step (median) | training minutes | val loss (whole split) |")
print("|---|---:|---:|---:|---:|")
for r in rows:
    print(f"| {r['setting']} | {r['steps']} | {r['median_step_ms']:,.0f} | {r['train_minutes']:.1f} | {r['val_loss']:.4f} |")
EOF
