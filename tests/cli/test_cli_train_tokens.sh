#!/usr/bin/env bash
# End-to-end test of training beyond characters: GPT-2's BPE and a bpe-train
# vocabulary on a text, gradient accumulation, fine-tuning the tiny GPT-2
# fixture (--init-from) and exporting the result, and the errors of each.
#
# usage: test_cli_train_tokens.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

gpt2_vocab=../shared/data/gpt2
if [[ ! -f $gpt2_vocab/encoder.json ]]; then
  echo "skipped: no GPT-2 vocabulary in $gpt2_vocab"
  exit 77
fi
for _ in $(seq 60); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
small=(--layers 1 --heads 2 --dims 16 --block-size 8 --batch-size 2 --eval-interval 4 --eval-iters 2)

# GPT-2's BPE on a text, with two micro-batches per step.
"$tinygpt" train --data "$work/corpus.txt" --tokenizer gpt2 "${small[@]}" --iters 4 --grad-accum 2 --out "$work/bpe" \
  2>"$work/bpe.log" || fail "train --tokenizer gpt2: non-zero exit: $(cat "$work/bpe.log")"
grep -q "gpt2 tokenizer of 50257 tokens" "$work/bpe.log" || fail "train --tokenizer gpt2: the header does not name the tokenizer"
grep -q "4 steps of 2 x 2 x 8 = 32 tokens" "$work/bpe.log" || fail "train --grad-accum: the header lacks the tokens per step"
# The checkpoint carries the tokenizer: sample and eval need no --vocab.
"$tinygpt" sample --ckpt "$work/bpe" --prompt "First Citizen" --tokens 5 --greedy >"$work/bpe_sample.txt" 2>"$work/err" \
  || fail "sample a BPE checkpoint: $(cat "$work/err")"
[[ $(head -c 13 "$work/bpe_sample.txt") == "First Citizen" ]] || fail "sample a BPE checkpoint: stdout lacks the prompt"
"$tinygpt" eval --ckpt "$work/bpe" --data "$work/corpus.txt" >"$work/out" 2>"$work/err" \
  || fail "eval a BPE checkpoint: $(cat "$work/err")"
grep -q "^loss " "$work/out" || fail "eval a BPE checkpoint: no loss line"
# Resuming on the same text takes the checkpoint's tokenizer; naming another is refused.
"$tinygpt" train --data "$work/corpus.txt" --out "$work/bpe" --resume --iters 6 2>"$work/err" \
  || fail "train --resume a BPE run: $(cat "$work/err")"
expect_error "resume with another tokenizer" "trained with a different gpt2 tokenizer" \
  "$tinygpt" train --data "$work/corpus.txt" --tokenizer char --out "$work/bpe" --resume --iters 8

# Activation checkpointing changes memory and time, never the numbers: the same losses as without it.
"$tinygpt" train --data "$work/corpus.txt" "${small[@]}" --dropout 0.1 --iters 4 --out "$work/plain" --log "$work/plain.jsonl" \
  2>/dev/null || fail "train without activation checkpointing failed"
"$tinygpt" train --data "$work/corpus.txt" "${small[@]}" --dropout 0.1 --iters 4 --out "$work/recomputed" \
  --log "$work/recomputed.jsonl" --checkpoint-activations 2>"$work/err" || fail "train --checkpoint-activations: $(cat "$work/err")"
grep -q "activation checkpointing" "$work/err" || fail "train --checkpoint-activations: the header does not say so"
losses() { grep -o '"train_loss":[^,]*\|"val_loss":[^,]*' "$1"; }
[[ "$(losses "$work/plain.jsonl")" == "$(losses "$work/recomputed.jsonl")" ]] \
  || fail "train --checkpoint-activations: the losses differ from the plain run's"

# A prepared dataset (tinygpt prepare) trains as the same text encoded in memory: the same losses.
"$tinygpt" prepare --data "$work/corpus.txt" --tokenizer gpt2 --out "$work/dataset" 2>/dev/null || fail "prepare failed"
"$tinygpt" train --data "$work/dataset" "${small[@]}" --iters 4 --out "$work/from_file" --log "$work/from_file.jsonl" \
  2>"$work/err" || fail "train --data DIR: $(cat "$work/err")"
grep -q "prepared: 960 tokens as uint16, gpt2 tokenizer of 50257 tokens, read a window at a time" "$work/err" \
  || fail "train --data DIR: the header does not describe the dataset: $(cat "$work/err")"
"$tinygpt" train --data "$work/corpus.txt" --tokenizer gpt2 "${small[@]}" --iters 4 --out "$work/from_text" \
  --log "$work/from_text.jsonl" 2>/dev/null || fail "train --tokenizer gpt2 (again) failed"
[[ "$(losses "$work/from_file.jsonl")" == "$(losses "$work/from_text.jsonl")" ]] \
  || fail "train --data DIR: the losses differ from training on the text encoded in memory"
"$tinygpt" sample --ckpt "$work/from_file" --prompt "First" --tokens 3 --greedy >/dev/null 2>"$work/err" \
  || fail "sample a model trained on a prepared dataset: $(cat "$work/err")"
expect_error "tokenizer flag on a prepared dataset" "carries its own tokenizer" \
  "$tinygpt" train --data "$work/dataset" --tokenizer gpt2 --out "$work/x"
expect_error "resume a char run on a BPE dataset" "trained with a different char tokenizer" \
  "$tinygpt" train --data "$work/dataset" --out "$work/plain" --resume --iters 6 --allow-new-data
cp -r "$work/dataset" "$work/damaged"
printf 'x' >>"$work/damaged/train.bin"
expect_error "a token file of odd size" "train.bin" "$tinygpt" train --data "$work/damaged" --out "$work/x"

# A vocabulary of our own from bpe-train.
"$tinygpt" bpe-train --data "$work/corpus.txt" --vocab-size 300 --out "$work/vocab" 2>/dev/null || fail "bpe-train failed"
"$tinygpt" train --data "$work/corpus.txt" --tokenizer "$work/vocab" "${small[@]}" --iters 2 --out "$work/own" \
  2>"$work/own.log" || fail "train --tokenizer DIR: $(cat "$work/own.log")"
grep -q "gpt2 tokenizer of 300 tokens" "$work/own.log" || fail "train --tokenizer DIR: the header does not name it"

# Fine-tune the tiny GPT-2 fixture: the loss falls; the export evaluates exactly as the checkpoint.
"$tinygpt" train --init-from tests/fixtures/hf_gpt2 --data "$work/corpus.txt" --block-size 16 --batch-size 4 \
  --iters 12 --lr 1e-2 --warmup 2 --eval-interval 12 --eval-iters 4 --out "$work/tuned" --log "$work/tuned.jsonl" \
  2>"$work/tuned.log" || fail "train --init-from: $(cat "$work/tuned.log")"
grep -q "model: from tests/fixtures/hf_gpt2" "$work/tuned.log" || fail "train --init-from: the header does not name the source"
first=$(grep '"eval"' "$work/tuned.jsonl" | head -1 | sed 's/.*"val_loss":\([0-9.]*\).*/\1/')
last=$(grep '"eval"' "$work/tuned.jsonl" | tail -1 | sed 's/.*"val_loss":\([0-9.]*\).*/\1/')
python3 -c "import sys; sys.exit(0 if $last < $first - 1 else 1)" || fail "train --init-from: val loss $first -> $last did not fall by 1"
"$tinygpt" export --ckpt "$work/tuned" --out "$work/exported" 2>"$work/err" || fail "export: $(cat "$work/err")"
for file in config.json model.safetensors vocab.json merges.txt; do
  [[ -f $work/exported/$file ]] || fail "export of a BPE model: no $file"
done
"$tinygpt" eval --ckpt "$work/tuned" --data "$work/corpus.txt" >"$work/checkpoint_loss" 2>/dev/null || fail "eval --ckpt failed"
"$tinygpt" eval --weights "$work/exported" --data "$work/corpus.txt" >"$work/exported_loss" 2>/dev/null || fail "eval --weights failed"
cmp -s "$work/checkpoint_loss" "$work/exported_loss" \
  || fail "the export's loss $(cat "$work/exported_loss") differs from the checkpoint's $(cat "$work/checkpoint_loss")"
# A fine-tuned checkpoint starts another fine-tuning run too.
"$tinygpt" train --init-from "$work/tuned" --data "$work/corpus.txt" --iters 1 --batch-size 2 --out "$work/tuned2" \
  2>"$work/err" || fail "train --init-from a tinygpt checkpoint: $(cat "$work/err")"

# Misuse: one line each, non-zero exit.
expect_error "init-from with a shape flag" "--layers cannot be given: the model's shape comes from the model to start from" \
  "$tinygpt" train --init-from tests/fixtures/hf_gpt2 --data "$work/corpus.txt" --layers 2 --out "$work/x"
expect_error "init-from with a longer context" "is longer than the context of the model to start from (128)" \
  "$tinygpt" train --init-from tests/fixtures/hf_gpt2 --data "$work/corpus.txt" --block-size 256 --out "$work/x"
expect_error "init-from and resume" "give one of them" \
  "$tinygpt" train --init-from tests/fixtures/hf_gpt2 --resume --out "$work/tuned"
expect_error "init-from a missing directory" "does not exist" \
  "$tinygpt" train --init-from "$work/nowhere" --data "$work/corpus.txt" --out "$work/x"
expect_error "init-from on data of another tokenizer" "was trained with a different gpt2 tokenizer" \
  "$tinygpt" train --init-from tests/fixtures/hf_gpt2 --data "$work/corpus.txt" --tokenizer char --out "$work/x"
expect_error "unknown tokenizer" "--tokenizer sentencepiece is neither char, gpt2 nor a directory" \
  "$tinygpt" train --data "$work/corpus.txt" --tokenizer sentencepiece --out "$work/x"
expect_error "vocab without gpt2" "--vocab is for --tokenizer gpt2" \
  "$tinygpt" train --data "$work/corpus.txt" --vocab "$gpt2_vocab" --out "$work/x"
expect_error "grad-accum 0" "--grad-accum" "$tinygpt" train --data "$work/corpus.txt" --grad-accum 0 --out "$work/x"

finish "train-on-tokens"
