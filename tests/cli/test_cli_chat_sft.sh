#!/usr/bin/env bash
# End-to-end test of chat SFT (issue 38): TinyTalks converted to conversations by
# examples/tinybot/tinytalks_to_jsonl.py, a tiny char-level model trained on them
# with the loss on the assistant's tokens, resumed, scored by eval on a .jsonl,
# and the refusals of bad conversation files (exit code 1) and misplaced flags.
#
# usage: test_cli_chat_sft.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

tinytalks=../shared/data/tinytalks
if [[ ! -f $tinytalks/train.txt ]]; then
  echo "skipped: no TinyTalks in $tinytalks"
  exit 77
fi
convert=examples/tinybot/tinytalks_to_jsonl.py
python3 "$convert" "$tinytalks/train.txt" --out "$work/train.jsonl" 2>/dev/null || fail "tinytalks_to_jsonl: train"
python3 "$convert" val >"$work/val.jsonl" 2>/dev/null || fail "tinytalks_to_jsonl: val by its name"
[[ $(wc -l <"$work/train.jsonl") -eq 210 ]] || fail "tinytalks_to_jsonl: expected 210 conversations"
head -1 "$work/train.jsonl" | grep -qF '{"messages": [{"role": "user", "content": "Where do you watch movies?"}, {"role": "assistant", "content": "You watch movies at a theater or at home."}]}' \
  || fail "tinytalks_to_jsonl: the first conversation is not the first pair: $(head -1 "$work/train.jsonl")"

small=(--layers 1 --heads 2 --dims 32 --block-size 128 --batch-size 8 --eval-interval 4 --eval-iters 2)
"$tinygpt" train --data "$work/train.jsonl" --val-data "$work/val.jsonl" "${small[@]}" --iters 6 --out "$work/run" \
  2>"$work/train.log" || fail "train --data FILE.jsonl: non-zero exit: $(cat "$work/train.log")"
grep -q "210 conversations; val: .*val.jsonl (45); template: ChatML" "$work/train.log" \
  || fail "train: the header does not describe the conversations: $(head -5 "$work/train.log")"
grep -Eq "^conversations: train 210 conversations \([0-9]+ assistant tokens within the block\)(, [0-9]+ longer than the block of 128: cut to it)?; val 45 conversations" "$work/train.log" \
  || fail "train: the header lacks the conversation counts: $(grep conversations "$work/train.log")"
grep -q "^batches: one conversation a row, padded to the longest of its micro-batch, grouped by length: [0-9.]*% of the positions" \
  "$work/train.log" || fail "train: the header lacks the padding share"
grep -q "step 6/6" "$work/train.log" || fail "train: no step 6 in the log"

# Resumed without --data: the checkpoint records both files.
"$tinygpt" train --out "$work/run" --resume --iters 8 2>"$work/resume.log" \
  || fail "train --resume on conversations: $(cat "$work/resume.log")"
grep -q "resuming .* at step 6" "$work/resume.log" || fail "train --resume: did not resume at step 6"

# eval on a .jsonl: the loss over the assistant's tokens, and their count.
"$tinygpt" eval --ckpt "$work/run" --data "$work/val.jsonl" >"$work/out" 2>"$work/err" \
  || fail "eval --data FILE.jsonl: $(cat "$work/err")"
grep -Eq "^loss [0-9.]+ perplexity [0-9.]+ assistant_tokens [0-9]+$" "$work/out" || fail "eval .jsonl: stdout is '$(cat "$work/out")'"
grep -q "45 conversations (template: ChatML" "$work/err" || fail "eval .jsonl: stderr does not describe the conversations"

# prepare --chat: the conversations encoded once; train --data DIR gives the losses of the .jsonl itself.
"$tinygpt" prepare --chat "$work/train.jsonl" --tokenizer char --out "$work/prepared" 2>"$work/prepare.log" \
  || fail "prepare --chat: $(cat "$work/prepare.log")"
for file in meta.json train.bin train.starts train.mask val.bin val.starts val.mask; do
  [[ -f $work/prepared/$file ]] || fail "prepare --chat: no $file"
done
grep -q "prepare: 210 conversations rendered with ChatML .*: train 189, val 21 (the last)" "$work/prepare.log" \
  || fail "prepare --chat: $(cat "$work/prepare.log")"
"$tinygpt" train --data "$work/prepared" "${small[@]}" --iters 4 --out "$work/from_prepared" 2>"$work/p.log" \
  || fail "train --data prepared conversations: $(cat "$work/p.log")"
"$tinygpt" train --data "$work/train.jsonl" "${small[@]}" --iters 4 --out "$work/from_jsonl" 2>"$work/j.log" \
  || fail "train --data FILE.jsonl without --val-data: $(cat "$work/j.log")"
grep -q "val: its last 21 (10%)" "$work/j.log" || fail "train without --val-data: the header does not say which are val"
prepared_loss=$(grep -o "eval step 4 | train loss [0-9.]* (ppl [0-9.]*) | val loss [0-9.]*" "$work/p.log")
[[ -n $prepared_loss && $prepared_loss == "$(grep -o "eval step 4 | train loss [0-9.]* (ppl [0-9.]*) | val loss [0-9.]*" "$work/j.log")" ]] \
  || fail "train on the prepared conversations: other losses than on the .jsonl ($prepared_loss)"
expect_exit "prepare --data and --chat" 2 "give --data (text files) or --chat (a file of conversations), one of them" \
  "$tinygpt" prepare --data "$work/train.jsonl" --chat "$work/train.jsonl" --tokenizer char --out "$work/bad"

# Bad files: one line naming the file and line, exit code 1.
printf '{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]}\n\n{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": ""}]}\n' >"$work/empty.jsonl"
expect_exit "empty assistant" 1 "train: --data $work/empty.jsonl line 3: has no assistant text to learn from" \
  "$tinygpt" train --data "$work/empty.jsonl" "${small[@]}" --iters 1 --out "$work/bad"
printf '{"messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Yo"}]}\n{"messages": [\n' >"$work/broken.jsonl"
expect_exit "bad JSON" 1 "train: --data $work/broken.jsonl line 2: not valid JSON" \
  "$tinygpt" train --data "$work/broken.jsonl" "${small[@]}" --iters 1 --out "$work/bad"
printf '{"messages": [{"role": "robot", "content": "Hi"}]}\n' >"$work/role.jsonl"
expect_exit "bad role" 1 "line 1: message 0 has role \"robot\"; expected system, user or assistant" \
  "$tinygpt" train --data "$work/train.jsonl" --val-data "$work/role.jsonl" "${small[@]}" --iters 1 --out "$work/bad"
head -1 "$work/train.jsonl" >"$work/one.jsonl"
expect_exit "one conversation" 1 "holds 1 conversation; at least 2 are needed" \
  "$tinygpt" train --data "$work/one.jsonl" "${small[@]}" --iters 1 --out "$work/bad"
printf 'plain text\n' >"$work/plain.txt"
expect_exit "val-data with a text" 1 "--val-data $work/val.jsonl is for conversations" \
  "$tinygpt" train --data "$work/plain.txt" --val-data "$work/val.jsonl" "${small[@]}" --iters 1 --out "$work/bad"
expect_exit "block too small" 1 "no conversation of the train split has an assistant token within the block size 16" \
  "$tinygpt" train --data "$work/train.jsonl" --layers 1 --heads 2 --dims 32 --block-size 16 --iters 1 --out "$work/bad"
expect_exit "log onto --val-data" 2 "--log $work/val.jsonl is the --val-data" \
  "$tinygpt" train --data "$work/train.jsonl" --val-data "$work/val.jsonl" --log "$work/val.jsonl" "${small[@]}" --iters 1 --out "$work/bad"
expect_exit "eval .jsonl --split" 1 "eval: --split is for a text" \
  "$tinygpt" eval --ckpt "$work/run" --data "$work/val.jsonl" --split val

finish "chat SFT"
