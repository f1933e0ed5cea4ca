#!/usr/bin/env bash
# The kernels' AVX-512 copies against their AVX2 copies (tensor/runtime/isa.h), on this
# CPU: bench_kernels run alternately with TINYGPT_ISA=avx2 and TINYGPT_ISA=avx512,
# then a table of medians with the ratio AVX2 ms / AVX-512 ms (> 1: AVX-512 is faster).
#   bash bench/run_kernel_isa.sh [rounds=3] [threads=2] [filter: a regex of bench_kernels' names]
# Needs a CPU with AVX-512. BENCH_BUILD_DIR=<dir> runs an existing build.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
rounds="${1:-3}"
threads="${2:-2}"
filter="${3:-attention_fwd|layer_norm_fwd|gelu_fwd|rope_fwd|cross_entropy_fwd|adamw_step}"
bench=$(bench_program bench_kernels)
grep -q " avx512f " /proc/cpuinfo || { echo "run_kernel_isa: this CPU has no AVX-512" >&2; exit 1; }
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')" >&2
for round in $(seq 1 "$rounds"); do
  for isa in avx2 avx512; do
    echo "round $round/$rounds: $isa" >&2
    TINYGPT_ISA=$isa OMP_NUM_THREADS="$threads" "$bench" --benchmark_min_time=1 --benchmark_filter="$filter" \
      --benchmark_format=json >"$results/$isa.$round.json" 2>/dev/null
  done
done

/usr/bin/python3 - "$results" "$rounds" "$threads" <<'PY'
import glob, json, statistics, sys
directory, rounds, threads = sys.argv[1], sys.argv[2], sys.argv[3]
def medians(isa):
    runs = {}
    for path in sorted(glob.glob(f"{directory}/{isa}.*.json")):
        for b in json.load(open(path))["benchmarks"]:
            runs.setdefault(b["run_name"].removesuffix("/real_time"), []).append((b["real_time"], b["rate"], b["label"]))
    return {name: (statistics.median(t for t, _, _ in v), statistics.median(r for _, r, _ in v), v[0][2])
            for name, v in runs.items()}
avx2, avx512 = medians("avx2"), medians("avx512")
print(f"medians of {rounds} alternating rounds, {threads} threads; ratio = AVX2 ms / AVX-512 ms")
print(f"{'kernel':<20}{'shape':<11}{'AVX2 ms':>9}{'AVX2 rate':>18}{'AVX-512 ms':>12}{'AVX-512 rate':>18}{'ratio':>7}")
for name, (ms, rate, unit) in avx2.items():
    kernel, shape = name.split("/")
    wide_ms, wide_rate, _ = avx512[name]
    print(f"{kernel:<20}{shape:<11}{ms:>9.3f}{rate:>10.1f} {unit:<7}{wide_ms:>12.3f}{wide_rate:>10.1f} {unit:<7}{ms / wide_ms:>7.2f}")
PY
