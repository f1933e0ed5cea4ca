#!/usr/bin/env bash
# TinyBot: a chat model trained from scratch on TinyTalks' 210 training
# conversations (CC BY 4.0) with the loss on the answers only, then asked every
# training question and every held-out test question in a fresh conversation.
#
#   bash examples/tinybot/run.sh [build/release/cli/tinygpt] [runs/tinybot]
#
# About a minute and a half of training on two cores; docs/fine_tuning.md shows a run.
set -euo pipefail
tinygpt=${1:-build/release/cli/tinygpt}
out=${2:-runs/tinybot}
here=$(dirname "$0")
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT
for split in train val test; do python3 "$here/tinytalks_to_jsonl.py" "$split" --out "$data/$split.jsonl"; done
"$tinygpt" train --data "$data/train.jsonl" --val-data "$data/val.jsonl" --layers 4 --heads 4 --dims 128 \
  --block-size 256 --batch-size 16 --iters 1000 --lr 2e-3 --warmup 50 --eval-interval 250 --out "$out" --overwrite
# The last step's weights: the task is to answer the training questions (the val loss is lowest early, at step 250).
python3 "$here/accuracy.py" --tinygpt "$tinygpt" --ckpt "$out/model.safetensors" "$data/train.jsonl"
python3 "$here/accuracy.py" --tinygpt "$tinygpt" --ckpt "$out/model.safetensors" "$data/test.jsonl" --show 5
