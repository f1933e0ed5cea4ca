#!/usr/bin/env bash
# End-to-end test of `tinygpt prepare`: char-level, BPE from bpe-train and (when
# ../shared/data has them) GPT-2 on tiny Shakespeare; the files it writes, the
# same bytes whatever the streaming piece size, and its error lines.
#
# usage: test_cli_prepare.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

for _ in $(seq 50); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
printf 'a second document\n\n  with  odd   spacing\t\tand tabs\r\nand no final newline' >"$work/second.txt"

# token_count SPLIT META: the "tokens" of "train" or "val" in a meta.json.
token_count() { grep -A3 "\"$1\": {" "$2" | grep -o '"tokens": [0-9]*' | grep -o '[0-9]*$'; }

# same_dataset NAME DIR_A DIR_B: the two datasets are the same bytes.
same_dataset() {
  for file in train.bin val.bin meta.json; do
    cmp -s "$2/$file" "$3/$file" || fail "$1: $file differs between $2 and $3"
  done
}

# Char-level: the files, a 90/10 split by position, one token per byte of this ASCII text.
"$tinygpt" prepare --data "$work/corpus.txt" --tokenizer char --out "$work/char" 2>"$work/char.log" ||
  fail "prepare char: non-zero exit: $(cat "$work/char.log")"
for file in train.bin val.bin meta.json; do
  [[ -f $work/char/$file ]] || fail "prepare char: $work/char/$file was not written"
done
grep -q '"format": "tinygpt-tokens-v1"' "$work/char/meta.json" || fail "prepare char: meta.json has no format"
grep -q '"dtype": "uint16"' "$work/char/meta.json" || fail "prepare char: meta.json is not uint16"
bytes=$(wc -c <"$work/corpus.txt")
train=$((bytes * 9 / 10))
[[ $(token_count train "$work/char/meta.json") -eq $train ]] || fail "prepare char: expected $train train tokens"
[[ $(token_count val "$work/char/meta.json") -eq $((bytes - train)) ]] || fail "prepare char: wrong val token count"
[[ $(wc -c <"$work/char/train.bin") -eq $((2 * train)) ]] || fail "prepare char: train.bin is not $train uint16 ids"
grep -q "^prepare: train $train tokens, val $((bytes - train)) tokens; written to $work/char" "$work/char.log" ||
  fail "prepare char: no summary of the splits: $(cat "$work/char.log")"
grep -q "^prepare: 1 file, .* MB/s); char tokenizer, vocabulary of 23, uint16" "$work/char.log" ||
  fail "prepare char: no summary of the run: $(cat "$work/char.log")"
# stderr is no terminal here: whole progress lines, no carriage returns.
grep -q "^prepare: encoding .* MB/s, .*M tokens, ETA" "$work/char.log" || fail "prepare char: no progress line"
if grep -q $'\r' "$work/char.log"; then fail "prepare char: a terminal's progress line went to a log file"; fi

# The ids do not depend on how the text is streamed.
"$tinygpt" prepare --data "$work/corpus.txt" --tokenizer char --out "$work/char_small" --chunk-bytes 5 --threads 2 \
  2>/dev/null || fail "prepare char --chunk-bytes 5: non-zero exit"
same_dataset "char in 5-byte pieces" "$work/char" "$work/char_small"

# A BPE vocabulary from bpe-train, two documents: a self-contained dataset with its vocabulary copied.
"$tinygpt" bpe-train --data "$work/corpus.txt" --vocab-size 300 --out "$work/bpe" 2>/dev/null || fail "bpe-train failed"
for pieces in 1048576 3; do
  "$tinygpt" prepare --data "$work/corpus.txt" "$work/second.txt" --tokenizer "$work/bpe" --out "$work/bpe_$pieces" \
    --chunk-bytes $pieces --val-fraction 0.2 2>"$work/bpe.log" || fail "prepare bpe: non-zero exit: $(cat "$work/bpe.log")"
done
same_dataset "BPE in 3-byte pieces" "$work/bpe_1048576" "$work/bpe_3"
grep -q '"type": "bpe"' "$work/bpe_3/meta.json" || fail "prepare bpe: meta.json does not say bpe"
for file in encoder.json vocab.bpe; do
  cmp -s "$work/bpe/$file" "$work/bpe_3/$file" || fail "prepare bpe: $file was not copied into the dataset"
done
grep -q "^prepare: 2 files, " "$work/bpe.log" || fail "prepare bpe: the summary does not count 2 files"

# GPT-2 on tiny Shakespeare and an odd second document, whole and in 64-byte pieces.
if [[ -f ../shared/data/tinyshakespeare.txt && -f ../shared/data/gpt2/encoder.json ]]; then
  for pieces in 1048576 64; do
    "$tinygpt" prepare --data ../shared/data/tinyshakespeare.txt "$work/second.txt" --tokenizer gpt2 \
      --vocab ../shared/data/gpt2 --out "$work/gpt2_$pieces" --chunk-bytes $pieces 2>"$work/gpt2.log" ||
      fail "prepare gpt2: non-zero exit: $(cat "$work/gpt2.log")"
  done
  same_dataset "GPT-2 in 64-byte pieces" "$work/gpt2_1048576" "$work/gpt2_64"
  # tiny Shakespeare is 338,025 GPT-2 tokens; then <|endoftext|> and the second document's 22.
  total=$(($(token_count train "$work/gpt2_64/meta.json") + $(token_count val "$work/gpt2_64/meta.json")))
  [[ $total -eq $((338025 + 1 + 22)) ]] || fail "prepare gpt2: $total tokens, expected 338048"
  grep -q '"type": "gpt2"' "$work/gpt2_64/meta.json" || fail "prepare gpt2: meta.json does not say gpt2"
else
  echo "skipped the GPT-2 part: ../shared/data has no tiny Shakespeare or GPT-2 files"
fi

# --help says what it writes.
"$tinygpt" prepare --help >"$work/help.txt" && grep -q "train.bin" "$work/help.txt" || fail "prepare --help does not say what it writes"

# Errors: one line, exit 1 for a file that is not there or not text, 2 for a bad flag; nothing left that looks done.
expect_exit "missing file" 1 "cannot read '$work/missing.txt'" \
  "$tinygpt" prepare --data "$work/missing.txt" --tokenizer char --out "$work/failed"
expect_exit "a directory as data" 1 "'$work/char' is a directory; give a text file" \
  "$tinygpt" prepare --data "$work/char" --tokenizer char --out "$work/failed"
printf 'caf\xe9 latin-1\n' >"$work/latin1.txt"
expect_exit "invalid UTF-8 for char" 1 "'$work/latin1.txt': the corpus is not valid UTF-8: byte 0xE9 at byte offset 3" \
  "$tinygpt" prepare --data "$work/latin1.txt" --tokenizer char --out "$work/failed"
[[ ! -e $work/failed/meta.json ]] || fail "a failed prepare left a meta.json"
expect_exit "validation fraction of 1" 2 "prepare: --val-fraction must be a number in [0, 1), got 1" \
  "$tinygpt" prepare --data "$work/corpus.txt" --tokenizer char --out "$work/failed" --val-fraction 1
expect_exit "unknown tokenizer" 2 "--tokenizer must be char, gpt2 or a directory holding encoder.json and vocab.bpe" \
  "$tinygpt" prepare --data "$work/corpus.txt" --tokenizer wordpiece --out "$work/failed"
expect_exit "--vocab with char" 2 "--vocab is GPT-2's vocabulary, for --tokenizer gpt2 only" \
  "$tinygpt" prepare --data "$work/corpus.txt" --tokenizer char --vocab "$work/bpe" --out "$work/failed"
expect_exit "no --out" 2 "prepare: --out is required" "$tinygpt" prepare --data "$work/corpus.txt" --tokenizer char
expect_exit "zero chunk bytes" 2 "--chunk-bytes must be a positive integer, got 0" \
  "$tinygpt" prepare --data "$work/corpus.txt" --tokenizer char --out "$work/failed" --chunk-bytes 0

finish "prepare"
