#!/usr/bin/env bash
# Files and streams from strangers (issue 32): output that cannot be written fails
# the command; a device as input is refused, a pipe without a writer reads as
# empty (never a hang), a pipe with one is read; a vocabulary file that is a
# device is refused.
#
# usage: test_cli_streams.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=$(realpath "${1:?usage: $0 path/to/tinygpt}")
source "$(dirname "$0")/cli_test_helpers.sh"
[[ -d ../shared/data/gpt2 ]] || { echo "skipped: the tests read ../shared/data/gpt2"; exit 77; }
vocab=../shared/data/gpt2

for i in $(seq 1 200); do echo "line $i: the quick brown fox jumps over the lazy dog."; done >"$work/corpus.txt"
tiny=(--layers 1 --heads 2 --dims 16 --block-size 16 --batch-size 4 --eval-iters 2 --iters 2)

# Standard output that cannot be written (/dev/full: every write fails with ENOSPC).
if [[ -w /dev/full ]]; then
  "$tinygpt" tokenize --vocab "$vocab" "$work/corpus.txt" >/dev/full 2>"$work/err"
  [[ $? -eq 1 ]] && grep -q "cannot write the output" "$work/err" || fail "tokenize > /dev/full: $(cat "$work/err")"
  "$tinygpt" tokenize --vocab "$vocab" --count "$work/corpus.txt" >/dev/null 2>&1 || fail "tokenize to /dev/null failed"
fi

# A device as --data: refused at once, in one sentence (it was read until memory ran out).
ln -s /dev/zero "$work/zero.txt"
expect_exit "train on /dev/zero" 1 "is a device or a socket, not a file" \
  timeout 20 "$tinygpt" train --data "$work/zero.txt" "${tiny[@]}" --out "$work/z"
expect_exit "tokenize /dev/zero" 1 "is a device or a socket, not a file" timeout 20 "$tinygpt" tokenize --vocab "$vocab" "$work/zero.txt"

# A named pipe with no writer: no hang, an empty text.
mkfifo "$work/fifo"
expect_exit "train on a pipe with no writer" 1 "empty" timeout 20 "$tinygpt" train --data "$work/fifo" "${tiny[@]}" --out "$work/f"

# A pipe with a writer (process substitution) is read whole.
"$tinygpt" train --data <(cat "$work/corpus.txt") "${tiny[@]}" --out "$work/piped" 2>"$work/piped.log" \
  || fail "train on a pipe: $(tail -1 "$work/piped.log")"
grep -q "($(wc -c <"$work/corpus.txt") bytes, char tokenizer" "$work/piped.log" || fail "train on a pipe: $(grep ^data: "$work/piped.log")"

# A vocabulary whose encoder.json is a device: refused, naming it.
mkdir -p "$work/vocab"
cp "$vocab/vocab.bpe" "$work/vocab/"
ln -s /dev/zero "$work/vocab/encoder.json"
expect_exit "encoder.json on /dev/zero" 1 "encoder.json: not a regular file" \
  timeout 20 "$tinygpt" tokenize --vocab "$work/vocab" "$work/corpus.txt"

# plot: a value no run logs is refused by line; a long log draws a picture of bounded size.
printf '{"iter":1,"train_loss":1e308,"lr":0.001}\n' >"$work/huge.jsonl"
expect_exit "plot of 1e308" 1 "line 1: \"train_loss\" is 1e+308" "$tinygpt" plot --metrics "$work/huge.jsonl" --out "$work/huge.svg"
awk 'BEGIN { for (i = 1; i <= 200000; ++i) printf "{\"iter\":%d,\"train_loss\":%.4f,\"lr\":0.001}\n", i, 3 + sin(i) + (i == 123456 ? 5 : 0) }' \
  >"$work/long.jsonl"
"$tinygpt" plot --metrics "$work/long.jsonl" --out "$work/long.svg" 2>/dev/null || fail "plot of 200,000 steps failed"
[[ $(wc -c <"$work/long.svg") -lt 1000000 ]] || fail "plot of 200,000 steps wrote $(wc -c <"$work/long.svg") bytes"

# A vocabulary that is not the model's: refused when loaded, not mid-output ("cannot decode id 15593").
"$tinygpt" bpe-train --data "$work/corpus.txt" --vocab-size 300 --out "$work/small_vocab" 2>/dev/null || fail "bpe-train"
expect_exit "GPT-2 with a small --vocab" 1 "the tokenizer has 300 tokens and the model 50257" \
  "$tinygpt" sample --weights tests/fixtures/hf_gpt2 --vocab "$work/small_vocab" --prompt "the" --tokens 50 --seed 1

# Messages that said the wrong thing.
mkdir -p "$work/fifo_dataset"
mkfifo "$work/fifo_dataset/meta.json"
expect_exit "meta.json a pipe" 1 "meta.json' is not a regular file" \
  timeout 20 "$tinygpt" train --data "$work/fifo_dataset" "${tiny[@]}" --out "$work/fd"
expect_exit "bpe-train --vocab-size 257" 2 "leaves no room for a merge" \
  "$tinygpt" bpe-train --data "$work/corpus.txt" --vocab-size 257 --out "$work/bpe257"
expect_exit "eval --ids empty" 1 "--ids is empty" "$tinygpt" eval --ckpt "$work/piped" --ids ""

# No command writes over what it reads.
mkdir -p "$work/over"
cp "$work/corpus.txt" "$work/over/train.bin"
expect_exit "prepare over its text" 2 "--out $work/over/train.bin is the --data file" \
  "$tinygpt" prepare --data "$work/over/train.bin" --tokenizer char --out "$work/over"
cmp -s "$work/over/train.bin" "$work/corpus.txt" || fail "prepare wrote over its own --data"
ln -sf loop_b "$work/loop_a"
ln -sf loop_a "$work/loop_b"
expect_exit "a symlink loop" 1 "Too many levels of symbolic links" "$tinygpt" plot --metrics "$work/loop_a" --out "$work/x.svg"
grep -q "filesystem error" "$work/err" && fail "a symlink loop: the library's words: $(cat "$work/err")"
cp "$work/piped/metrics.jsonl" "$work/log.jsonl"
expect_exit "plot over its metrics" 2 "--out $work/log.jsonl is the --metrics file" \
  "$tinygpt" plot --metrics "$work/log.jsonl" --out "$work/log.jsonl"
ln -s "$work/log.jsonl" "$work/link.svg"
expect_exit "plot over its metrics through a link" 2 "is the --metrics file" \
  "$tinygpt" plot --metrics "$work/log.jsonl" --out "$work/link.svg"
[[ $(head -c 1 "$work/log.jsonl") == "{" ]] || fail "the metrics log was written over"
mkdir -p "$work/bpe"
cp "$work/corpus.txt" "$work/bpe/vocab.bpe"
expect_exit "bpe-train over its text" 2 "is the --data file" \
  "$tinygpt" bpe-train --data "$work/bpe/vocab.bpe" --vocab-size 300 --out "$work/bpe"

finish "streams"
