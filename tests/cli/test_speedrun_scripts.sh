#!/usr/bin/env bash
# The speedrun's scripts (issue 37) on a model small enough for seconds:
# bench/run_speedrun.sh stops at the target and reports its time and tokens, or
# says the target was not reached; bench/speedrun_report.py writes the curve as
# JSON Lines and an SVG of every run in the folder, draws --marker points on a
# logarithmic axis and refuses a malformed one; bench/run_speedrun_ablation.sh
# trains every setting to its budget and prints the table.
#
# usage: test_speedrun_scripts.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"
[[ -f ../shared/data/tinyshakespeare.txt ]] || { echo "skipped: the scripts read ../shared/data/tinyshakespeare.txt"; exit 77; }
export BENCH_BUILD_DIR
BENCH_BUILD_DIR=$(cd "$(dirname "$tinygpt")/.." && pwd)

cat >"$work/tiny.toml" <<'EOF'
config = "cpu-small"
layers = 1
heads = 2
dims = 16
block-size = 16
batch-size = 8
iters = 6
eval-interval = 3
eval-iters = 1
EOF
svg_parses() { python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$1"; }

# A target the first evaluation meets: reported at step 0.
TARGET=9 DTYPE=float32 bash bench/run_speedrun.sh "$work/tiny.toml" "$work/out" >"$work/reached.log" 2>&1 \
  || fail "run_speedrun.sh: non-zero exit: $(tail -5 "$work/reached.log")"
grep -q "target: val loss <= 9 on the whole validation split" "$work/reached.log" || fail "run_speedrun.sh: the target is not printed"
grep -q "^tiny: val .* <= 9.0 at step 0: .* minutes, 0.0M tokens" "$work/reached.log" \
  || fail "run_speedrun.sh: no time and tokens to the target: $(tail -3 "$work/reached.log")"
[[ $(wc -l <"$work/out/curve.jsonl") -eq 1 ]] || fail "run_speedrun.sh: curve.jsonl should hold the one evaluation"
svg_parses "$work/out/curve.svg" || fail "run_speedrun.sh: curve.svg is not well-formed"

# A target it cannot reach: the whole run, said so, beside the first run in the same folder.
cp "$work/tiny.toml" "$work/tiny2.toml"
TARGET=0.5 DTYPE=float32 bash bench/run_speedrun.sh "$work/tiny2.toml" "$work/out" >"$work/missed.log" 2>&1 \
  || fail "run_speedrun.sh: non-zero exit when the target is not reached: $(tail -5 "$work/missed.log")"
grep -q "^tiny2: target 0.5 not reached; last val .* at step 6" "$work/missed.log" \
  || fail "run_speedrun.sh: the missed target is not said: $(tail -3 "$work/missed.log")"
[[ $(wc -l <"$work/out/curve.jsonl") -eq 3 ]] || fail "run_speedrun.sh: curve.jsonl should hold steps 0, 3 and 6"
grep -q ">tiny2<" "$work/out/curve.svg" && grep -q ">tiny<" "$work/out/curve.svg" \
  || fail "run_speedrun.sh: the SVG does not show both runs of the folder"

# Markers: a logarithmic minutes axis with the labelled point; a malformed one is refused.
python3 bench/speedrun_report.py --target 1.47 --out "$work/report" --marker "a baseline=300:1.4697" "$work/out/tiny2" \
  >"$work/report.log" 2>&1 || fail "speedrun_report.py --marker: non-zero exit: $(cat "$work/report.log")"
grep -q "logarithmic" "$work/report/curve.svg" && grep -q ">a baseline<" "$work/report/curve.svg" \
  || fail "speedrun_report.py --marker: no logarithmic axis or no labelled marker"
svg_parses "$work/report/curve.svg" || fail "speedrun_report.py --marker: the SVG is not well-formed"
python3 bench/speedrun_report.py --target 1.47 --out "$work/report" --marker "300" "$work/out/tiny2" >/dev/null 2>"$work/bad.log" \
  && fail "speedrun_report.py accepted a marker without a label and a loss"
grep -q "is not LABEL=MINUTES:LOSS" "$work/bad.log" || fail "speedrun_report.py: the bad marker is not named: $(cat "$work/bad.log")"

# The ablation at a tiny budget on a tiny shape: every setting trained and scored, the table printed.
MINUTES=0.01 PROBE_STEPS=1 bash bench/run_speedrun_ablation.sh "$work/ablation" -- --layers 1 --heads 2 --dims 16 \
  --block-size 16 >"$work/ablation.log" 2>&1 || fail "run_speedrun_ablation.sh: non-zero exit: $(tail -5 "$work/ablation.log")"
settings=7
grep -qw avx512_bf16 /proc/cpuinfo || settings=5
[[ $(wc -l <"$work/ablation/ablation.jsonl" 2>/dev/null) -eq $settings ]] \
  || fail "run_speedrun_ablation.sh: expected $settings settings in ablation.jsonl: $(cat "$work/ablation.log")"
python3 -c '
import json, math, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert all(r["steps"] >= 10 and math.isfinite(r["val_loss"]) and r["val_loss"] < 5 for r in rows), rows' \
  "$work/ablation/ablation.jsonl" 2>"$work/rows.log" || fail "run_speedrun_ablation.sh: a setting's row is wrong: $(cat "$work/rows.log")"
grep -q "^| speedrun recipe in float32 | [0-9]* | " "$work/ablation.log" || fail "run_speedrun_ablation.sh: no table row for the recipe"

finish "speedrun script"
