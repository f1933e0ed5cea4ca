#!/usr/bin/env bash
# Data parallel on one machine: the same training work as 1 process x 2 threads
# and as 2 ranks x 1 thread (mpirun -np 2, each rank half of the batch), for
# the cpu-small, baby and gpt2 configs. The two layouts alternate (A B A B ...)
# so that drift of a shared machine hits both alike; each run's first steps
# (page faults of fresh buffers) are dropped and the medians of the rest kept.
#
# Prints, per config and layout: tokens per step, the median ms per step and
# its all-reduce part, tokens/s of the whole job, and the 2-rank / 1-process
# throughput ratio.
#
# usage: bash bench/run_data_parallel.sh   (settings from the environment:
#   MODELS ("cpu-small baby gpt2"), REPEATS (2), CORPUS (../shared/data/tinyshakespeare.txt),
#   VOCAB (../shared/data/gpt2, for gpt2's BPE), BENCH_BUILD_DIR)
# Run as root it passes Open MPI's switches for that (only here, never for users).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
models=${MODELS:-"cpu-small baby gpt2"}
repeats=${REPEATS:-2}
corpus=${CORPUS:-../shared/data/tinyshakespeare.txt}
vocab=${VOCAB:-../shared/data/gpt2}
[[ -f $corpus ]] || { echo "run_data_parallel.sh: no corpus at $corpus (set CORPUS)" >&2; exit 1; }
tinygpt=$(bench_tinygpt)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}
if [[ $(id -u) -eq 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

# settings_of MODEL: "GLOBAL_BATCH BLOCK STEPS WARMUP_STEPS EXTRA_FLAGS..."
settings_of() {
  case "$1" in
    cpu-small) echo "12 64 60 5" ;;
    baby) echo "64 256 12 2" ;;
    gpt2) echo "2 1024 5 1 --tokenizer gpt2 --vocab $vocab" ;;
    *) echo "run_data_parallel.sh: no settings for '$1'" >&2; exit 1 ;;
  esac
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
for model in $models; do
  read -r batch block steps warmup extra <<<"$(settings_of "$model")"
  # shellcheck disable=SC2206
  extra=(${extra:-})
  common=(train --data "$corpus" --config "$model" --block-size "$block" --iters "$steps" --eval-interval 100000
          --eval-iters 1 "${extra[@]}")
  for repeat in $(seq "$repeats"); do
    "$tinygpt" "${common[@]}" --threads 2 --batch-size "$batch" --out "$work/single" \
      --log "$work/$model-single-$repeat.jsonl" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
    mpirun -np 2 --bind-to core "$tinygpt" "${common[@]}" --threads 1 --batch-size $((batch / 2)) --out "$work/ranks" \
      --log "$work/$model-ranks-$repeat.jsonl" 2>"$work/log" || { cat "$work/log" >&2; exit 1; }
  done
  python3 - "$work" "$model" "$batch" "$block" "$warmup" <<'PY'
import glob, json, statistics, sys
work, model, batch, block, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
tokens = batch * block
rows = {}
for layout in ("single", "ranks"):
    steps = []
    for path in sorted(glob.glob(f"{work}/{model}-{layout}-*.jsonl")):
        records = [json.loads(line) for line in open(path) if line.strip()]
        steps += [r for r in records if not r.get("eval")][warmup:]
    step_ms = statistics.median(r["step_ms"] for r in steps)
    reduce_ms = statistics.median(r.get("all_reduce_ms", 0.0) for r in steps)
    rows[layout] = (step_ms, reduce_ms, tokens / (step_ms / 1e3), len(steps))
names = {"single": "1 process x 2 threads", "ranks": "2 ranks x 1 thread"}
for layout, (step_ms, reduce_ms, per_s, count) in rows.items():
    share = f"{reduce_ms:9.1f} ms ({100 * reduce_ms / step_ms:4.1f}%)" if layout == "ranks" else f"{'-':>19}"
    print(f"{model:10s} {names[layout]:22s} {tokens:6d} tokens/step {step_ms:10.1f} ms/step  all-reduce {share} "
          f"{per_s:9.0f} tokens/s  ({count} steps)")
print(f"{model:10s} 2 ranks / 1 process throughput: {rows['ranks'][2] / rows['single'][2]:.2f}x")
PY
done
