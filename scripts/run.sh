#!/usr/bin/env bash
# The main job on a fresh machine: install, build, train the char-level GPT
# (config cpu-small) on tiny Shakespeare, then sample from it.
#   bash scripts/run.sh [extra flags for `tinygpt train`, e.g. --iters 500]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release --target tinygpt_cli
data=$(bash scripts/data.sh)
out=runs/shakespeare-char
build/release/cli/tinygpt train --data "$data" --config cpu-small --out "$out" --log "$out/metrics.jsonl" "$@"
echo
build/release/cli/tinygpt sample --ckpt "$out" --prompt "ROMEO:" --tokens 400 --temperature 0.8 --top-k 40 --seed 1
