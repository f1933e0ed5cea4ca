#!/usr/bin/env bash
# One GPT training step (forward, backward, AdamW), tinygpt against PyTorch, each
# side at its own best settings:
#   tinygpt  as a user runs it: its own thread policy and OpenBLAS kernels
#            (tensor/runtime/process_environment.h), its AVX-512 or AVX2 kernels (tensor/runtime/isa.h);
#   torch    PyTorch on the OpenMP build of OpenBLAS with the best OpenBLAS
#            kernels for this CPU (the ones tinygpt picks), libgomp's default wait policy.
# Runs are interleaved (tinygpt, torch, tinygpt, ...) so that a busy machine
# slows every side alike, and each run is its own process (its peak memory is
# its own). Prints each run's JSON line, then per shape the median ms/step, the
# ratio torch / tinygpt, peak memory and tinygpt's share of its GEMM bound
# (the step's GEMM FLOPs at the sgemm speed measured at start: bench_train_step --profile).
#
# usage: bench/run_train_vs_torch.sh [BUILD_DIR] [ROUNDS] [SHAPES...]
#   BUILD_DIR defaults to build/release, ROUNDS to 3, SHAPES (config:BxT) to
#   cpu-small:12x64 baby:64x256 gpt2:4x64 gpt2:8x256.
#   PYTHON (default /usr/bin/python3, Debian's, which has torch 1.13), THREADS (2),
#   BASELINE_BUILD_DIR adds a side "tinygpt (baseline)" from another build (say, main
#   before a change), TORCH_DEFAULT_BLAS=1 a side for torch on the system's default libblas.
set -euo pipefail

project_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$project_root/build/release}
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : $# ))
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=(cpu-small:12x64 baby:64x256 gpt2:4x64 gpt2:8x256)
python=${PYTHON:-/usr/bin/python3}
threads=${THREADS:-2}
ours=$build_dir/bench/bench_train_step
openmp_blas=/usr/lib/x86_64-linux-gnu/openblas-openmp
[[ -x $ours ]] || { echo "run_train_vs_torch.sh: $ours not found (build the bench_train_step target)" >&2; exit 1; }
blas_core=$(env -u TINYGPT_ENVIRONMENT "$build_dir/cli/tinygpt" --version | sed -n 's/.*OpenBLAS kernels \([A-Za-z]*\).*/\1/p')
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(env -u TINYGPT_ENVIRONMENT \
  "$build_dir/cli/tinygpt" --version | grep '^runtime:' | sed 's/^runtime: *//')" >&2

results=$(mktemp)
trap 'rm -f "$results"' EXIT
iters_for() { case $1 in cpu-small:*|llama-small:*) echo 20 ;; gpt2:4x64) echo 5 ;; smollm2-135m:*) echo 2 ;; *) echo 3 ;; esac; }
tag() { sed "s/^{/{\"side\":\"$1\",\"shape\":\"$2\",/" | tee -a "$results"; }

for shape in "${shapes[@]}"; do
  config=${shape%%:*} size=${shape#*:}
  batch=${size%x*} block=${size#*x}
  iters=$(iters_for "$shape")
  for round in $(seq "$rounds"); do
    env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u TINYGPT_ENVIRONMENT OMP_NUM_THREADS="$threads" "$ours" --config "$config" \
      --batch "$batch" --block "$block" --iters "$iters" --warmup 1 --threads "$threads" --profile 2>/dev/null | tag tinygpt "$shape"
    if [[ -n ${BASELINE_BUILD_DIR:-} ]]; then
      env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT OMP_NUM_THREADS="$threads" "$BASELINE_BUILD_DIR/bench/bench_train_step" \
        --config "$config" --batch "$batch" --block "$block" --iters "$iters" --warmup 1 --threads "$threads" |
        tag "tinygpt (baseline)" "$shape"
    fi
    env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT LD_LIBRARY_PATH="$openmp_blas" OPENBLAS_CORETYPE="$blas_core" "$python" \
      "$project_root/bench/torch_reference.py" --config "$config" --batch "$batch" --block "$block" --iters "$iters" \
      --warmup 1 --threads "$threads" | tag torch "$shape"
    if [[ ${TORCH_DEFAULT_BLAS:-0} == 1 ]]; then
      env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "$python" "$project_root/bench/torch_reference.py" --config "$config" \
        --batch "$batch" --block "$block" --iters "$iters" --warmup 1 --threads "$threads" | tag "torch (default BLAS)" "$shape"
    fi
  done
done

"$python" - "$results" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    record = json.loads(line)
    runs[record["shape"], record["side"]].append(record)
def median(records, key):
    values = [r[key] for r in records if r.get(key) is not None]
    return statistics.median(values) if values else None
print(f"\n{'shape':<18} {'side':<22} {'ms/step':>9} {'tokens/s':>9} {'peak MB':>8} {'torch/this':>10} {'GEMM bound ms':>14} {'of bound':>9}")
for shape in dict.fromkeys(key[0] for key in runs):
    torch_ms = median(runs[shape, "torch"], "ms_median")
    for side in ("tinygpt", "tinygpt (baseline)", "torch", "torch (default BLAS)"):
        records = runs.get((shape, side))
        if not records:
            continue
        ms = median(records, "ms_median")
        tokens = records[0]["batch"] * records[0]["block"]
        bound = median(records, "gemm_bound_ms")
        bound_cells = f"{bound:14.1f} {100 * bound / ms:8.0f}%" if bound else f"{'':>14} {'':>9}"
        print(f"{shape:<18} {side:<22} {ms:9.1f} {tokens / (ms / 1e3):9.0f} {max(r['peak_rss_mb'] for r in records):8.0f} "
              f"{torch_ms / ms:9.2f}x {bound_cells}")
print("(torch/this > 1: torch is slower; medians over rounds of each run's median step; "
      "of bound: GEMM-bound time / step time)")
PY
