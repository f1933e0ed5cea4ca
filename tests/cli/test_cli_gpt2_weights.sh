#!/usr/bin/env bash
# GPT-2 weights in the Hugging Face layout, end to end through the CLI: the
# small GPT-2-architecture fixture of tests/reference/make_hf_gpt2_fixture.py
# (random weights, the real GPT-2 BPE), evaluated and sampled, against the
# numbers PyTorch recorded for it; then exported from a tinygpt checkpoint.
#
# usage: test_cli_gpt2_weights.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

weights=tests/fixtures/hf_gpt2
vocab=../shared/data/gpt2
if [[ ! -f $vocab/encoder.json ]]; then
  echo "skipped: GPT-2 BPE files not found in $vocab"
  exit 77  # SKIP_RETURN_CODE: CTest reports it as skipped, not passed
fi
# expected FIELD: a value from the fixture's expected.json (ids space-separated).
expected() {
  python3 -c 'import json, sys
value = json.load(open(sys.argv[1]))[sys.argv[2]]
print(" ".join(map(str, value)) if isinstance(value, list) else value)' "$weights/expected.json" "$1"
}
prompt=$(expected prompt)
prompt_ids=$(expected prompt_ids)
reference_loss=$(expected loss)

# eval --ids and eval --data on the prompt's text: the loss PyTorch computed, to 1e-5.
"$tinygpt" eval --weights "$weights" --vocab "$vocab" --ids "$prompt_ids" >"$work/ids.txt" 2>"$work/eval.log" \
  || fail "eval --ids: non-zero exit: $(cat "$work/eval.log")"
printf '%s' "$prompt" >"$work/prompt.txt"
"$tinygpt" eval --weights "$weights" --vocab "$vocab" --data "$work/prompt.txt" >"$work/text.txt" 2>/dev/null \
  || fail "eval --data: non-zero exit"
cmp -s "$work/ids.txt" "$work/text.txt" || fail "eval: --ids and --data of the same text differ"
read -r _ loss _ perplexity <"$work/ids.txt"
awk -v l="$loss" -v r="$reference_loss" 'BEGIN { d = (l - r) / r; exit !(d < 1e-5 && d > -1e-5) }' \
  || fail "eval: loss $loss, PyTorch says $reference_loss"
# Windows of 8: a different number (less context), still a finite loss.
"$tinygpt" eval --weights "$weights" --vocab "$vocab" --ids "$prompt_ids" --block-size 8 >"$work/short.txt" 2>/dev/null \
  || fail "eval --block-size 8: non-zero exit"
cmp -s "$work/ids.txt" "$work/short.txt" && fail "eval --block-size 8: same loss as with the whole context"

# sample --greedy: the prompt, then the text of PyTorch's greedy ids, with and without the KV cache.
expected greedy_ids | "$tinygpt" tokenize --gpt2 "$vocab" --decode >"$work/greedy_text.txt" 2>/dev/null
printf '%s' "$prompt" | cat - "$work/greedy_text.txt" >"$work/expected_sample.txt"
for cache in "" --no-cache; do
  "$tinygpt" sample --weights "$weights" --vocab "$vocab" --prompt "$prompt" --tokens 20 --greedy $cache \
    >"$work/sample.txt" 2>"$work/sample.log" || fail "sample $cache: non-zero exit: $(cat "$work/sample.log")"
  cmp -s "$work/sample.txt" "$work/expected_sample.txt" \
    || fail "sample $cache: greedy text differs from PyTorch's: $(cat "$work/sample.txt")"
done

# tokenize reads a file argument as it reads stdin, and takes --vocab (or --gpt2).
printf '%s' "$prompt" | "$tinygpt" tokenize --gpt2 "$vocab" >"$work/stdin_ids.txt" 2>/dev/null
"$tinygpt" tokenize --vocab "$vocab" "$work/prompt.txt" >"$work/file_ids.txt" 2>/dev/null || fail "tokenize FILE: non-zero exit"
cmp -s "$work/stdin_ids.txt" "$work/file_ids.txt" || fail "tokenize FILE: different ids than stdin"
[[ $(cat "$work/file_ids.txt") == "$prompt_ids" ]] || fail "tokenize FILE: $(cat "$work/file_ids.txt"), expected $prompt_ids"

# A Hugging Face model directory with its own vocab.json and merges.txt needs no --vocab.
mkdir -p "$work/hf_dir"
cp "$weights/config.json" "$weights/model.safetensors" "$work/hf_dir/"
cp "$vocab/encoder.json" "$work/hf_dir/vocab.json"
cp "$vocab/vocab.bpe" "$work/hf_dir/merges.txt"
"$tinygpt" sample --weights "$work/hf_dir" --prompt "$prompt" --tokens 20 --greedy >"$work/hf_sample.txt" \
  2>"$work/hf_sample.log" || fail "sample --weights with vocab.json: non-zero exit: $(cat "$work/hf_sample.log")"
cmp -s "$work/hf_sample.txt" "$work/expected_sample.txt" || fail "sample --weights with vocab.json: different text"
grep -q "tokenizer from $work/hf_dir" "$work/hf_sample.log" || fail "sample: did not use the directory's own vocabulary"

# export a tinygpt checkpoint to the Hugging Face layout and read it back: the same loss both ways.
for _ in $(seq 40); do echo "the cat sat on the mat"; done >"$work/corpus.txt"
"$tinygpt" train --data "$work/corpus.txt" --layers 1 --heads 2 --dims 16 --block-size 8 --batch-size 2 \
  --iters 3 --eval-interval 3 --eval-iters 1 --out "$work/run" 2>/dev/null || fail "train: non-zero exit"
"$tinygpt" export --ckpt "$work/run" --out "$work/exported" 2>"$work/export.log" \
  || fail "export: non-zero exit: $(cat "$work/export.log")"
for file in config.json model.safetensors char_vocabulary.txt; do
  [[ -f $work/exported/$file ]] || fail "export: $file was not written"
done
for source in "--ckpt $work/run" "--weights $work/exported"; do
  # shellcheck disable=SC2086  # the source is two words on purpose
  "$tinygpt" eval $source --data "$work/corpus.txt" >>"$work/roundtrip.txt" 2>/dev/null || fail "eval $source: non-zero exit"
  "$tinygpt" sample $source --prompt "the" --tokens 12 --greedy >>"$work/roundtrip_samples.txt" 2>/dev/null \
    || fail "sample $source: non-zero exit"
done
[[ $(sort -u "$work/roundtrip.txt" | wc -l) -eq 1 ]] || fail "export: another loss read back: $(cat "$work/roundtrip.txt")"
[[ $(wc -l <"$work/roundtrip.txt") -eq 2 ]] || fail "export: expected two eval lines: $(cat "$work/roundtrip.txt")"
[[ $(head -c 15 "$work/roundtrip_samples.txt") == $(tail -c 15 "$work/roundtrip_samples.txt") ]] \
  || fail "export: greedy samples differ: $(cat "$work/roundtrip_samples.txt")"

# explain --weights: every stage, the BPE tokens of the prompt.
"$tinygpt" explain --weights "$weights" --vocab "$vocab" --prompt "Hello, world" --target " and" >"$work/explain.txt" \
  2>"$work/explain.log" || fail "explain --weights: non-zero exit: $(cat "$work/explain.log")"
for section in "[tokens]" "'Hello' 15496" "' world' 995" "[block1.residual_2]" "[probabilities]" "Loss on the target" \
  "Causality:"; do
  grep -qF -- "$section" "$work/explain.txt" || fail "explain --weights: '$section' is missing"
done

# Misuse: one line, non-zero exit.
expect_error "weights directory missing" "$work/none" "$tinygpt" eval --weights "$work/none" --ids "1 2"
expect_error "both --ckpt and --weights" "--weights" "$tinygpt" eval --ckpt "$work/run" --weights "$weights" --ids "1 2"
mkdir -p "$work/broken" && cp "$weights/config.json" "$work/broken/"
head -c 5000 "$weights/model.safetensors" >"$work/broken/model.safetensors"
expect_error "truncated weights" "model.safetensors" "$tinygpt" eval --weights "$work/broken" --ids "1 2"
printf '31373 -5\n' >"$work/bad_ids.txt"
expect_error "decode of a negative id" "tokenize --decode: '-5' (word 2) is not a token id" \
  "$tinygpt" tokenize --gpt2 "$vocab" --decode "$work/bad_ids.txt"
expect_error "vocab files missing" "$work/novocab" \
  "$tinygpt" sample --weights "$weights" --vocab "$work/novocab" --prompt "x"
expect_error "id outside GPT-2's vocabulary" "outside the vocabulary" \
  "$tinygpt" eval --weights "$weights" --vocab "$vocab" --ids "1 50257"

finish "GPT-2 weights CLI"
