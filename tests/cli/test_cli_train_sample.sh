#!/usr/bin/env bash
# End-to-end test of `tinygpt train` and `tinygpt sample` on a tiny corpus:
# train a few steps, resume, sample with and without the KV cache, and check
# that misuse ends with one readable error line and a non-zero exit code.
#
# usage: test_cli_train_sample.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

for _ in $(seq 60); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
model_flags=(--layers 1 --heads 2 --dims 16 --block-size 8 --batch-size 2)
run_flags=(--data "$work/corpus.txt" --eval-interval 3 --eval-iters 2 --seed 5 --out "$work/run")

# Train 6 steps, then resume to 9.
if ! "$tinygpt" train "${run_flags[@]}" "${model_flags[@]}" --iters 6 --log "$work/metrics.jsonl" 2>"$work/train.log"; then
  fail "train: non-zero exit: $(cat "$work/train.log")"
fi
for file in model.safetensors best.safetensors; do
  [[ -f $work/run/$file ]] || fail "train: $work/run/$file was not written"
done
grep -q '"val_loss"' "$work/metrics.jsonl" || fail "train: no evaluation line in the metrics log"
[[ $(grep -vc '"eval"' "$work/metrics.jsonl") -eq 6 ]] || fail "train: expected 6 step lines in the metrics log"
grep -q "eval step 6 | train loss" "$work/train.log" || fail "train: no evaluation line on stderr"

"$tinygpt" train --data "$work/corpus.txt" --out "$work/run" --resume --iters 9 --log "$work/metrics.jsonl" \
  2>"$work/resume.log" || fail "train --resume: non-zero exit: $(cat "$work/resume.log")"
grep -q "resuming .* at step 6" "$work/resume.log" || fail "train --resume: did not resume at step 6"
[[ $(grep -vc '"eval"' "$work/metrics.jsonl") -eq 9 ]] || fail "train --resume: expected 9 step lines in the log"

# Sample: stdout is the prompt and its continuation only.
"$tinygpt" sample --ckpt "$work/run" --prompt "First" --tokens 30 --greedy >"$work/cached.txt" 2>"$work/sample.log" \
  || fail "sample: non-zero exit: $(cat "$work/sample.log")"
"$tinygpt" sample --ckpt "$work/run" --prompt "First" --tokens 30 --greedy --no-cache >"$work/uncached.txt" 2>/dev/null \
  || fail "sample --no-cache: non-zero exit"
[[ $(head -c 5 "$work/cached.txt") == First ]] || fail "sample: stdout does not start with the prompt"
[[ $(wc -c <"$work/cached.txt") -eq 35 ]] || fail "sample: expected 5 + 30 characters, got $(wc -c <"$work/cached.txt")"
cmp -s "$work/cached.txt" "$work/uncached.txt" || fail "sample: greedy output differs with and without the KV cache"
"$tinygpt" sample --ckpt "$work/run/model.safetensors" --prompt "po" --tokens 20 --temperature 0.8 --top-k 5 \
  --top-p 0.9 --repetition-penalty 1.2 --seed 3 >"$work/a.txt" 2>/dev/null || fail "sample with every option: non-zero exit"
"$tinygpt" sample --ckpt "$work/run/model.safetensors" --prompt "po" --tokens 20 --temperature 0.8 --top-k 5 \
  --top-p 0.9 --repetition-penalty 1.2 --seed 3 >"$work/b.txt" 2>/dev/null
cmp -s "$work/a.txt" "$work/b.txt" || fail "sample: the same seed gave different text"

# The prompt from a file or from standard input gives the same text as --prompt.
printf 'po' >"$work/prompt.txt"
"$tinygpt" sample --ckpt "$work/run/model.safetensors" --prompt-file "$work/prompt.txt" --tokens 20 --temperature 0.8 \
  --top-k 5 --top-p 0.9 --repetition-penalty 1.2 --seed 3 >"$work/c.txt" 2>/dev/null || fail "sample --prompt-file: non-zero exit"
cmp -s "$work/a.txt" "$work/c.txt" || fail "sample --prompt-file: different text than --prompt"
printf 'po' | "$tinygpt" sample --ckpt "$work/run/model.safetensors" --prompt - --tokens 20 --temperature 0.8 \
  --top-k 5 --top-p 0.9 --repetition-penalty 1.2 --seed 3 >"$work/d.txt" 2>/dev/null || fail "sample --prompt -: non-zero exit"
cmp -s "$work/a.txt" "$work/d.txt" || fail "sample --prompt -: different text than --prompt"

# --stop ends a sample at the first occurrence of its text (kept); --num-samples writes several, separated.
stop_text=$(head -c 12 "$work/cached.txt" | tail -c 3)  # 3 characters the greedy continuation produces
"$tinygpt" sample --ckpt "$work/run" --prompt "First" --tokens 30 --greedy --stop "$stop_text" >"$work/stopped.txt" \
  2>/dev/null || fail "sample --stop: non-zero exit"
generated=$(tail -c +6 "$work/cached.txt")  # the continuation of the 5-character prompt
expected_stop=$(awk -v text="$generated" -v stop="$stop_text" 'BEGIN { print 5 + index(text, stop) - 1 + length(stop) }')
[[ $(wc -c <"$work/stopped.txt") -eq $expected_stop ]] ||
  fail "sample --stop '$stop_text': expected $expected_stop bytes, got $(wc -c <"$work/stopped.txt")"
"$tinygpt" sample --ckpt "$work/run" --prompt "po" --tokens 10 --num-samples 3 --seed 1 >"$work/three.txt" 2>/dev/null \
  || fail "sample --num-samples: non-zero exit"
[[ $(grep -c -- '^---------------$' "$work/three.txt") -eq 2 ]] || fail "sample --num-samples 3: expected 2 separators"

# Past the context length the note comes on stderr before the text, never inside it.
"$tinygpt" sample --ckpt "$work/run" --prompt "First" --tokens 30 --greedy >"$work/long.txt" 2>"$work/long.log"
grep -q "note: .*more than the context length of 8" "$work/long.log" || fail "sample: no context-length note: $(cat "$work/long.log")"
cmp -s "$work/long.txt" "$work/cached.txt" || fail "sample: the note changed stdout"

# Eval: exactly one stdout line "loss L perplexity P" with P = exp(L).
"$tinygpt" eval --ckpt "$work/run" --data "$work/corpus.txt" --max-tokens 200 >"$work/eval.txt" 2>"$work/eval.log" \
  || fail "eval: non-zero exit: $(cat "$work/eval.log")"
[[ $(wc -l <"$work/eval.txt") -eq 1 ]] || fail "eval: expected one stdout line, got: $(cat "$work/eval.txt")"
read -r word_loss loss word_perplexity perplexity <"$work/eval.txt"
[[ $word_loss == loss && $word_perplexity == perplexity ]] || fail "eval: bad line: $(cat "$work/eval.txt")"
awk -v l="$loss" -v p="$perplexity" 'BEGIN { d = exp(l) - p; exit !(l > 0 && l < 10 && d < 1e-9 * p && d > -1e-9 * p) }' \
  || fail "eval: perplexity $perplexity is not exp(loss $loss)"

# eval --split val scores the part training held out, and says so.
"$tinygpt" eval --ckpt "$work/run" --data "$work/corpus.txt" --split val >"$work/eval_val.txt" 2>"$work/eval_val.log" \
  || fail "eval --split val: non-zero exit: $(cat "$work/eval_val.log")"
grep -q "scoring the val split, tokens [0-9]* to [0-9]* (the last 10%" "$work/eval_val.log" \
  || fail "eval --split val: does not say what it scored: $(cat "$work/eval_val.log")"
cmp -s "$work/eval_val.txt" "$work/eval.txt" && fail "eval --split val: same loss as the start of the file"

# Misuse: one line, non-zero exit.
expect_error "missing data" "cannot read '$work/nowhere.txt'" \
  "$tinygpt" train --data "$work/nowhere.txt" --out "$work/x" --iters 1
expect_error "unknown preset" "gpt5" "$tinygpt" train --data "$work/corpus.txt" --config gpt5 --out "$work/x"
expect_error "resume changes the model" "--layers cannot change in a resumed run" \
  "$tinygpt" train --data "$work/corpus.txt" --out "$work/run" --resume --layers 3
expect_error "resume without checkpoint" "no checkpoint at" \
  "$tinygpt" train --data "$work/corpus.txt" --out "$work/empty" --resume
expect_error "prompt outside the vocabulary" "'Z'" "$tinygpt" sample --ckpt "$work/run" --prompt "Zebra"
expect_error "missing checkpoint" "does not exist" "$tinygpt" sample --ckpt "$work/nothing"
head -c 3000 "$work/run/model.safetensors" >"$work/truncated.safetensors"
expect_error "truncated checkpoint" "truncated.safetensors" "$tinygpt" sample --ckpt "$work/truncated.safetensors"
expect_error "eval without data" "give one of --data FILE or --ids" "$tinygpt" eval --ckpt "$work/run"
expect_error "eval with a bad id" "'x7' (word 2) is not a token id" "$tinygpt" eval --ckpt "$work/run" --ids "1 x7"
expect_error "eval with an id outside the vocabulary" "outside the vocabulary" "$tinygpt" eval --ckpt "$work/run" --ids "1 999"
expect_error "eval of one token" "at least 2 tokens" "$tinygpt" eval --ckpt "$work/run" --ids "1"
expect_error "eval of an unknown character" "'Z'" "$tinygpt" eval --ckpt "$work/run" --data <(printf 'Zebra')
expect_error "sample without a model" "give a model: --ckpt DIR (a tinygpt run or checkpoint) or --weights DIR" "$tinygpt" sample --prompt "x"
expect_error "bad temperature" "--temperature must be a number >= 0, got -1" "$tinygpt" sample --ckpt "$work/run" --temperature -1
# A flag the parser does not know: non-zero exit, named on stderr (CLI11 adds a "Run with --help" hint).
if "$tinygpt" train --no-such-flag >/dev/null 2>"$work/err"; then fail "bad flag: exit code 0"; fi
grep -qF -- "--no-such-flag" "$work/err" || fail "bad flag: not named on stderr: $(cat "$work/err")"

finish "tinygpt train/sample CLI"
