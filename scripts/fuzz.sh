#!/usr/bin/env bash
# Runs the libFuzzer harnesses of tests/fuzz/ (built by `bash scripts/build.sh fuzz`).
# Each harness first runs every seed once, whole (tests/fuzz/corpus/<harness>/ and
# the JSON nested 70,000 deep and the wide JSON, tens of thousands of entries, that
# tests/fuzz/deep_seeds.py writes), then fuzzes from them for a fixed time:
#
#   bash scripts/fuzz.sh                          # 20 s each: the stage scripts/test.sh runs
#   bash scripts/fuzz.sh --long                   # 10 min each: the run README.md reports
#   FUZZ_SECONDS=120 bash scripts/fuzz.sh checkpoint hf_config   # chosen harnesses, 2 min each
#
# Each harness works on a scratch copy of its corpus, deleted afterwards: what a run
# discovers never lands in the repository. A crash, a sanitizer report, a broken
# property, more than 2 GB of memory or an input taking over 10 s is a finding: the
# input is kept as build/fuzz/findings/<harness>-crash-<sha1> (or -oom-, -timeout-),
# the log is build/fuzz/logs/<harness>.log, and the script exits 1 once every
# harness has run. One harness at a time, one process, one thread (OMP_NUM_THREADS=1).
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-20}
if [[ "${1:-}" == "--long" ]]; then
  seconds=${FUZZ_SECONDS:-600}
  shift
fi
harnesses=("$@")
if ((${#harnesses[@]} == 0)); then
  harnesses=(safetensors checkpoint quantized_decode hf_config token_meta gpt2_vocabulary bpe_encoder char_tokenizer
             chat_template lora_adapter conversations serve_requests)
fi

# The longest input a harness is given while fuzzing: its largest seed fits (a
# tiny BPE model's checkpoint is 14.6 KB, the Llama fixture's adapter 18.5 KB),
# and longer inputs only slow it down.
max_len() {
  case $1 in
    checkpoint | quantized_decode) echo 16384 ;;
    safetensors | gpt2_vocabulary | chat_template) echo 8192 ;;
    lora_adapter) echo 20480 ;;
    *) echo 4096 ;;
  esac
}

binaries=build/fuzz/tests/fuzz
mkdir -p build/fuzz/findings build/fuzz/logs
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

failed=()
for harness in "${harnesses[@]}"; do
  fuzzer=$binaries/fuzz_$harness
  if [[ ! -x $fuzzer || ! -d tests/fuzz/corpus/$harness ]]; then
    echo "fuzz: no harness '$harness' (build it with: bash scripts/build.sh fuzz)" >&2
    exit 2
  fi
  corpus=$scratch/$harness
  mkdir -p "$corpus"
  cp tests/fuzz/corpus/"$harness"/* "$corpus"/
  python3 tests/fuzz/deep_seeds.py "$harness" "$corpus"
  seeds=$(find "$corpus" -type f | wc -l)
  log=build/fuzz/logs/$harness.log
  limits=(-rss_limit_mb=2048 -timeout=10 -artifact_prefix="build/fuzz/findings/$harness-")
  # Without -max_len, seeds given as files run whole (the 140 KB deep ones too).
  if OMP_NUM_THREADS=1 "$fuzzer" "${limits[@]}" "$corpus"/* >"$log" 2>&1 &&
     OMP_NUM_THREADS=1 "$fuzzer" "${limits[@]}" -max_len="$(max_len "$harness")" -max_total_time="$seconds" \
       "$corpus" >>"$log" 2>&1; then
    # libFuzzer's last status line: "#1234 DONE cov: 2109 ft: 5643 corp: 741/496Kb lim: 3494 exec/s: 8283 rss: 462Mb"
    # and then "Done 1234 runs in 20 second(s)".
    read -r cov ft corp < <(awk '/DONE/ { print $4, $6, $8 }' "$log" | tail -n 1)
    read -r runs took < <(awk '/^Done [0-9]+ runs in/ { print $2, $5 }' "$log" | tail -n 1)
    printf "fuzz: %-16s %9d runs in %4d s, cov %s, ft %s, corpus %d seeds -> %s: no finding\n" \
      "$harness" "$runs" "$took" "$cov" "$ft" "$seeds" "${corp%%/*}"
  else
    echo "fuzz: $harness: FINDING (the input is in build/fuzz/findings/, the whole log in $log):"
    grep -E "ERROR|SUMMARY|property does not hold|runtime error|#[0-9]+ 0x|Test unit written" "$log" | head -n 30
    failed+=("$harness")
  fi
done
if ((${#failed[@]} > 0)); then
  echo "fuzz: findings in: ${failed[*]}" >&2
  exit 1
fi
