#!/usr/bin/env bash
# The main job on a fresh machine: install, build, train the char-level GPT
# (config cpu-small) on tiny Shakespeare, then sample from it.
#   bash scripts/run.sh [extra flags for `tinygpt train`, e.g. --iters 500]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release --target tinygpt_cli
data=$(bash scripts/data.sh)
# tinygpt never trains over a run: a second call trains into runs/shakespeare-char-2, -3, ...
out=runs/shakespeare-char
for n in $(seq 2 1000); do
  [[ -e $out/model.safetensors || -e $out/best.safetensors ]] || break
  out=runs/shakespeare-char-$n
done
build/release/cli/tinygpt train --data "$data" --config cpu-small --out "$out" --log "$out/metrics.jsonl" "$@"
echo
build/release/cli/tinygpt sample --ckpt "$out" --prompt "ROMEO:" --tokens 400 --temperature 0.8 --top-k 40 --seed 1
echo
echo "The run is in $out. To call tinygpt by its name, as README and docs/ do, run in this directory:"
echo 'export PATH="$PWD/build/release/cli:$PATH"'
