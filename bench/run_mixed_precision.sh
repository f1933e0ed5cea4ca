#!/usr/bin/env bash
# Mixed-precision training (train --dtype bf16, GPT::set_matmul_dtype) against
# float32: the step time and activation memory of cpu-small and baby
# (bench_activation_memory, one process per run, float32 and bf16 interleaved
# round after round), and the bf16 product kernel in use. Prints each run's JSON
# line, then per config the medians and bf16's gain.
#
# usage: bench/run_mixed_precision.sh [BUILD_DIR] [ROUNDS] [SHAPES...]
#   BUILD_DIR defaults to build/release, ROUNDS to 3, SHAPES (config:BxT) to
#   cpu-small:12x64 baby:64x256. THREADS (2). BEFORE=OTHER_BUILD_DIR runs that
#   build's float32 and bf16 too, in the same rounds (a change's figures before
#   and after, under the same load), reported as dtypes "float32 before" and
#   "bf16 before". Prints the range over the rounds beside each median, and the
#   same for the CPU time of the process's threads per step (cpu_ms_median of
#   bench_activation_memory): on a machine shared with other work, run with
#   OMP_WAIT_POLICY=passive and compare those.
set -euo pipefail

project_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${1:-$project_root/build/release}
rounds=${2:-3}
shift $(( $# >= 2 ? 2 : $# ))
shapes=("$@")
[[ ${#shapes[@]} -gt 0 ]] || shapes=(cpu-small:12x64 baby:64x256)
threads=${THREADS:-2}
ours=$build_dir/bench/bench_activation_memory
[[ -x $ours ]] || { echo "run_mixed_precision.sh: $ours not found (build the bench_activation_memory target)" >&2; exit 1; }
before=${BEFORE:+$BEFORE/bench/bench_activation_memory}
[[ -z $before || -x $before ]] || { echo "run_mixed_precision.sh: $before not found" >&2; exit 1; }

results=$(mktemp)
trap 'rm -f "$results"' EXIT
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $threads threads;" \
  "AVX512-BF16: $(grep -qw avx512_bf16 /proc/cpuinfo && echo yes || echo 'no (bf16 products run widened to float32)')"
for round in $(seq "$rounds"); do
  for shape in "${shapes[@]}"; do
    config=${shape%%:*} batch_block=${shape#*:}
    steps=$([[ $config == cpu-small ]] && echo 30 || echo 3)
    for program in ${before:+"$before"} "$ours"; do
      label=$([[ $program == "$ours" ]] && echo "" || echo " before")
      for dtype in float32 bf16; do
        OMP_NUM_THREADS=$threads "$program" --config "$config" --batch "${batch_block%x*}" --block "${batch_block#*x}" \
          --steps "$steps" --warmup 1 --threads "$threads" --dtype "$dtype" |
          python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); r["dtype"] += sys.argv[1]; print(json.dumps(r))' \
            "$label" | tee -a "$results"
      done
    done
  done
done

python3 - "$results" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    record = json.loads(line)
    runs[(record["config"], record["batch"], record["block"], record["dtype"])].append(record)
print(f"\n{'config, B x T':<20}{'dtype':<16}{'ms/step (range)':>24}{'CPU ms/step (range)':>26}{'activation MiB':>16}{'first loss':>12}")
def spread(values):
    return f"{statistics.median(values):.1f} ({min(values):.0f}-{max(values):.0f})"
for key in sorted({key[:3] for key in runs}):
    for suffix in [" before", ""] if any(k[3].endswith(" before") for k in runs) else [""]:
        for dtype in ("float32", "bf16"):
            records = runs[key + (dtype + suffix,)]
            print(f"{key[0] + ', ' + str(key[1]) + ' x ' + str(key[2]):<20}{dtype + suffix:<16}"
                  f"{spread([r['ms_median'] for r in records]):>24}{spread([r['cpu_ms_median'] for r in records]):>26}"
                  f"{statistics.median(r['activation_mib'] for r in records):>16.0f}{records[0]['first_loss']:>12.4f}")
        # The speed-up of each round (its float32 over its bf16), then their median and range.
        pairs = list(zip(runs[key + ("float32" + suffix,)], runs[key + ("bf16" + suffix,)]))
        wall = [f["ms_median"] / b["ms_median"] for f, b in pairs]
        cpu = [f["cpu_ms_median"] / b["cpu_ms_median"] for f, b in pairs]
        print(f"{'':<20}{'bf16' + suffix + ' gain':<16}{statistics.median(wall):>13.2f}x ({min(wall):.2f}-{max(wall):.2f})"
              f"{statistics.median(cpu):>15.2f}x ({min(cpu):.2f}-{max(cpu):.2f})  (float32 / bf16 per round)")
PY
