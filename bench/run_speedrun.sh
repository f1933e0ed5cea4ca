#!/usr/bin/env bash
# The CPU speedrun (docs/speedrun.md): trains a recipe on tiny Shakespeare, scores
# the whole validation split at the recipe's evaluation interval, stops when the
# validation loss reaches the target, and reports the wall-clock time and the
# tokens it took (evaluations included), with the curve as JSON Lines and SVG.
#
# usage: bench/run_speedrun.sh [RECIPE] [OUT_DIR] [-- extra train flags]
#   RECIPE   recipes/shakespeare_speedrun.toml (default) or recipes/shakespeare_char.toml
#            (nanoGPT's recipe, the baseline), or any train --config-file
#   OUT_DIR  bench/out/speedrun (default): OUT_DIR/<recipe name>/ holds the run,
#            OUT_DIR/curve.{jsonl,svg} the report, beside every other run already in OUT_DIR
# TARGET (1.47: nanoGPT's 1.4697 rounded), MINUTES (0: no limit; the run is
# stopped and saved at that wall time), THREADS (2), DTYPE (bf16 where the CPU has
# AVX512-BF16, else float32; `DTYPE=float32` forces it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source bench/bench_program.sh

recipe=${1:-recipes/shakespeare_speedrun.toml}
out_dir=${2:-bench/out/speedrun}
shift $(( $# >= 2 ? 2 : $# ))
[[ "${1:-}" == "--" ]] && shift
target=${TARGET:-1.47}
minutes=${MINUTES:-0}
threads=${THREADS:-2}
data=$(bash scripts/data.sh)
[[ -f $recipe ]] || { echo "run_speedrun.sh: no recipe file '$recipe'" >&2; exit 2; }

tinygpt=$(bench_tinygpt)
name=$(basename "$recipe" .toml)
run_dir=$out_dir/$name
mkdir -p "$run_dir"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $threads threads;" \
  "AVX512-BF16: $(grep -qw avx512_bf16 /proc/cpuinfo && echo yes || echo no)"
echo "recipe: $recipe; target: val loss <= $target on the whole validation split"
limit=()
[[ $minutes != 0 ]] && limit=(timeout --signal=TERM "${minutes}m")
# bf16 products pay only where the CPU has AVX512-BF16 (elsewhere they run widened to float32, slower).
dtype=()
[[ -z ${DTYPE:-} ]] && grep -qw avx512_bf16 /proc/cpuinfo && DTYPE=bf16
[[ -n ${DTYPE:-} ]] && dtype=(--dtype "$DTYPE")
status=0
"${limit[@]}" "$tinygpt" train --config-file "$recipe" --data "$data" --out "$run_dir" --overwrite \
  --threads "$threads" --eval-whole-val 1 --target-loss "$target" "${dtype[@]}" "$@" 2>&1 | tee "$run_dir/train.log" || status=$?
# 124 (timeout) and 130/143 (stopped by a signal) still leave a saved run to report on.
[[ $status == 0 || $status == 124 || $status == 130 || $status == 143 ]] || exit "$status"

runs=("$run_dir")
for other in "$out_dir"/*/; do
  [[ "$(cd "$other" && pwd)" == "$(cd "$run_dir" && pwd)" ]] || runs+=("$other")
done
python3 bench/speedrun_report.py --target "$target" --out "$out_dir" "${runs[@]}"
