#!/usr/bin/env bash
# The fused kernels against PyTorch: bench_kernels and bench/torch_kernels.py run
# alternately (ours, torch, ours, torch, ...) so that drift of the shared machine
# hits both alike, then a table of medians with the ratio torch time / our time
# (> 1: we are faster).
#   bash bench/run_kernels.sh [rounds=3] [threads=2]
# BENCH_BUILD_DIR=<dir> runs an existing build instead of building build/release.
# TORCH_DEFAULT_BLAS=1 adds a column for torch on the system's default libblas
# (by default torch runs on the OpenMP OpenBLAS, its best case here).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
rounds="${1:-3}"
threads="${2:-2}"
bench=$(bench_program bench_kernels)
openblas_openmp=/usr/lib/x86_64-linux-gnu/openblas-openmp
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# The fused-vs-reference comparisons have no torch counterpart, so they are left
# out here; `bench_kernels --benchmark_filter=vs_reference` prints them.
for round in $(seq 1 "$rounds"); do
  echo "round $round/$rounds: tinygpt" >&2
  OMP_NUM_THREADS="$threads" "$bench" --benchmark_min_time=1 --benchmark_filter=-_vs_reference \
    --benchmark_format=json >"$results/ours.$round.json" 2>/dev/null
  echo "round $round/$rounds: torch (OpenMP OpenBLAS)" >&2
  OMP_NUM_THREADS="$threads" LD_LIBRARY_PATH="$openblas_openmp" \
    /usr/bin/python3 bench/torch_kernels.py --threads "$threads" >"$results/torch.$round.jsonl"
  if [[ "${TORCH_DEFAULT_BLAS:-0}" == 1 ]]; then
    echo "round $round/$rounds: torch (default BLAS)" >&2
    OMP_NUM_THREADS="$threads" /usr/bin/python3 bench/torch_kernels.py --threads "$threads" \
      >"$results/torchdefault.$round.jsonl"
  fi
done

/usr/bin/python3 - "$results" "$rounds" "$threads" <<'PY'
import glob, json, statistics, sys
directory, rounds, threads = sys.argv[1], sys.argv[2], sys.argv[3]
def collect(kind):
    runs = {}
    if kind == "ours":
        for path in sorted(glob.glob(f"{directory}/ours.*.json")):
            for b in json.load(open(path))["benchmarks"]:
                name = b["run_name"].removesuffix("/real_time")
                runs.setdefault(name, []).append((b["real_time"], b["rate"], b["label"]))
    else:
        for path in sorted(glob.glob(f"{directory}/{kind}.*.jsonl")):
            for line in open(path):
                r = json.loads(line)
                runs.setdefault(r["name"], []).append((r["ms"], r["rate"], r["unit"]))
    return {name: (statistics.median(t for t, _, _ in v), statistics.median(r for _, r, _ in v), v[0][2])
            for name, v in runs.items()}
ours, torch = collect("ours"), collect("torch")
default = collect("torchdefault")
print(f"medians of {rounds} alternating rounds, {threads} threads; ratio = torch ms / our ms")
header = f"{'kernel':<24}{'shape':<11}{'ours ms':>9}{'ours rate':>18}{'torch ms':>10}{'torch rate':>18}{'ratio':>7}"
if default: header += f"{'torch(def) ms':>15}{'ratio':>7}"
print(header)
for name, (ms, rate, unit) in ours.items():
    if name not in torch: continue
    kernel, shape = name.split("/")
    tms, trate, _ = torch[name]
    line = f"{kernel:<24}{shape:<11}{ms:>9.3f}{rate:>10.1f} {unit:<7}{tms:>10.3f}{trate:>10.1f} {unit:<7}{tms / ms:>7.2f}"
    if default and name in default: line += f"{default[name][0]:>15.3f}{default[name][0] / ms:>7.2f}"
    print(line)
PY
