#!/usr/bin/env bash
# One GPT training step (forward, backward, AdamW) at batch 4 x 64 tokens, tinygpt
# against PyTorch, for cpu-small, baby and gpt2. Runs are interleaved (ours,
# torch, torch with OpenBLAS-OpenMP, ours, ...) so that a busy machine slows
# every side alike, and each run is its own process (its peak memory is its own).
# Prints each run's JSON line, then the median ms/step per side and the ratios.
#
# usage: bench/run_train_vs_torch.sh [BUILD_DIR] [ROUNDS] [CONFIGS...]
#   BUILD_DIR defaults to build (it must hold bench/bench_train_step), ROUNDS to 3.
#   PYTHON (default /usr/bin/python3, Debian's, which has torch 1.13) and THREADS (2).
set -euo pipefail

project_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$project_root/build}
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : $# ))
configs=("$@")
[[ ${#configs[@]} -gt 0 ]] || configs=(cpu-small baby gpt2)
python=${PYTHON:-/usr/bin/python3}
# Idle OpenMP threads sleep instead of spinning: on a machine shared with other
# work, spinning threads steal the cores their teammates need, and a 50 ms step
# took seconds (for torch, which also uses libgomp, as much as for us).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
threads=${THREADS:-2}
ours=$build_dir/bench/bench_train_step
openmp_blas=/usr/lib/x86_64-linux-gnu/openblas-openmp
[[ -x $ours ]] || { echo "run_train_vs_torch.sh: $ours not found (build the bench_train_step target)" >&2; exit 1; }

results=$(mktemp)
trap 'rm -f "$results"' EXIT
iters_for() { case $1 in gpt2) echo 5 ;; baby) echo 10 ;; *) echo 20 ;; esac; }

for config in "${configs[@]}"; do
  iters=$(iters_for "$config")
  for round in $(seq "$rounds"); do
    OMP_NUM_THREADS=$threads "$ours" --config "$config" --iters "$iters" --threads "$threads" \
      | sed 's/^{/{"side":"tinygpt",/' | tee -a "$results"
    "$python" "$project_root/bench/torch_reference.py" --config "$config" --iters "$iters" --threads "$threads" \
      | sed 's/^{/{"side":"torch (default BLAS)",/' | tee -a "$results"
    LD_LIBRARY_PATH=$openmp_blas "$python" "$project_root/bench/torch_reference.py" --config "$config" \
      --iters "$iters" --threads "$threads" | sed 's/^{/{"side":"torch (openblas-openmp)",/' | tee -a "$results"
  done
done

"$python" - "$results" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
memory = collections.defaultdict(list)
for line in open(sys.argv[1]):
    record = json.loads(line)
    runs[record["config"], record["side"]].append(record["ms_median"])
    memory[record["config"], record["side"]].append(record["peak_rss_mb"])
print(f"\n{'config':<10} {'side':<26} {'ms/step':>9} {'tokens/s':>9} {'peak MB':>8} {'vs tinygpt':>10}")
for config in dict.fromkeys(key[0] for key in runs):
    ours = statistics.median(runs[config, "tinygpt"])
    for side in ("tinygpt", "torch (default BLAS)", "torch (openblas-openmp)"):
        ms = statistics.median(runs[config, side])
        print(f"{config:<10} {side:<26} {ms:9.1f} {256 / (ms / 1e3):9.0f} {max(memory[config, side]):8.0f} "
              f"{ms / ours:9.2f}x")
print("(vs tinygpt > 1: torch is slower; medians over rounds of each run's median step)")
PY
