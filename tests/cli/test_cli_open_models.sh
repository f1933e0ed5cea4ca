#!/usr/bin/env bash
# The Llama family in the Hugging Face layout, end to end through the CLI: the
# four fixtures of tests/reference/make_hf_llama_fixtures.py (Llama with BF16
# shards, Mistral in F16, Qwen2, Qwen3: random weights, small tokenizer.json
# files in the real formats, chat templates) sampled greedily against the text
# Hugging Face's tokenizers and PyTorch give, evaluated, chatted with (the KV
# cache kept across turns), exported and read back, quantized, explained and
# fine-tuned; and the refusals.
#
# usage: test_cli_open_models.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

# expected DIR FIELD: a value from the fixture's expected.json (ids space-separated).
expected() {
  python3 -c 'import json, sys
value = json.load(open(sys.argv[1]))[sys.argv[2]]
print(" ".join(map(str, value)) if isinstance(value, list) else value, end="")' "$1/expected.json" "$2"
}

# lossy: standard input with bytes that are not UTF-8 replaced by U+FFFD, as Hugging Face's decode returns
# text (random weights pick byte tokens that split characters; tinygpt prints the bytes as they are).
lossy() { python3 -c 'import sys; sys.stdout.write(sys.stdin.buffer.read().decode("utf-8", errors="replace"))'; }

for i in $(seq 12); do
  printf 'ROMEO: What light through yonder window breaks?\nIt is the east, and Juliet is the sun.\n'
done >"$work/text.txt"
for family in llama mistral qwen2 qwen3; do
  dir=tests/fixtures/hf_llama/$family
  prompt=$(expected "$dir" text_prompt)

  # sample --greedy prints what PyTorch's greedy continuation decodes to with Hugging Face's tokenizer.
  "$tinygpt" sample --weights "$dir" --greedy --prompt "$prompt" -n 8 2>"$work/sample.log" | lossy >"$work/sample.txt" \
    || fail "$family: sample: $(cat "$work/sample.log")"
  expected "$dir" text_output >"$work/expected.txt"
  cmp -s "$work/sample.txt" "$work/expected.txt" \
    || fail "$family: sample --greedy printed '$(cat "$work/sample.txt")', PyTorch + HF tokenizers give '$(cat "$work/expected.txt")'"
  grep -q "Hugging Face .*ForCausalLM layout" "$work/sample.log" || fail "$family: sample's header does not name the architecture"

  # The prompt's ids are those of Hugging Face's tokenizer(text).
  printf '%s' "$prompt" | "$tinygpt" tokenize --vocab "$dir" --special >"$work/ids.txt" 2>"$work/tokenize.log" \
    || fail "$family: tokenize: $(cat "$work/tokenize.log")"
  [[ $(tr -s ' \n' ' ' <"$work/ids.txt" | sed 's/ $//') == "$(expected "$dir" text_ids)" ]] \
    || fail "$family: tokenize --special gave '$(cat "$work/ids.txt")', HF gives '$(expected "$dir" text_ids)'"

  # eval --ids: PyTorch's loss of the fixture's sequence, to 1e-4 relative.
  "$tinygpt" eval --weights "$dir" --ids "$(expected "$dir" ids)" >"$work/ids_loss.txt" 2>"$work/eval.log" \
    || fail "$family: eval --ids: $(cat "$work/eval.log")"
  read -r _ loss _ <"$work/ids_loss.txt"
  awk -v l="$loss" -v r="$(expected "$dir" loss)" 'BEGIN { d = (l - r) / r; exit !(d < 1e-4 && d > -1e-4) }' \
    || fail "$family: eval --ids: loss $loss, PyTorch says $(expected "$dir" loss)"

  # eval --data: a finite loss.
  "$tinygpt" eval --weights "$dir" --data "$work/text.txt" >"$work/loss.txt" 2>"$work/eval.log" \
    || fail "$family: eval: $(cat "$work/eval.log")"
  grep -Eq '^loss [0-9]+\.[0-9]+' "$work/loss.txt" || fail "$family: eval printed '$(cat "$work/loss.txt")'"

  # One chat turn, and a conversation whose second turn reuses the first's cache.
  "$tinygpt" sample --weights "$dir" --chat -p "Hello" --greedy -n 4 >"$work/chat1.txt" \
    2>"$work/chat1.log" || fail "$family: sample --chat: $(cat "$work/chat1.log")"
  printf 'Hi\nYo\n/reset\nHi\n' | "$tinygpt" chat --weights "$dir" --greedy -n 3 \
    >"$work/chat.txt" 2>"$work/chat.log" || fail "$family: chat: $(cat "$work/chat.log")"
  [[ $(grep -c ' tokens in ' "$work/chat.log") -eq 3 ]] || fail "$family: chat: expected 3 replies: $(cat "$work/chat.log")"
  reused=$(grep -o '[0-9]* of them from the cache' "$work/chat.log" | sed -n 2p | cut -d' ' -f1)
  [[ ${reused:-0} -gt 0 ]] || fail "$family: chat: the second turn reused nothing of the first: $(cat "$work/chat.log")"
  reset=$(grep -o '[0-9]* of them from the cache' "$work/chat.log" | sed -n 3p | cut -d' ' -f1)
  [[ ${reset:-1} -eq 0 ]] || fail "$family: chat: after /reset the cache still served $reset tokens"
done

# tokenize --chat: the ids of Hugging Face's apply_chat_template(..., tokenize=True, add_generation_prompt=True)
# with the real Llama 3 and Qwen 3 tokenizers and templates (tests/reference/make_chat_ids_fixture.py).
python3 - "$work" <<'PY'
import json, sys
fixture = json.load(open("tests/fixtures/tokenizer/chat_ids.json"))
json.dump({"messages": fixture["messages"]}, open(sys.argv[1] + "/conversation.json", "w"))
for index, case in enumerate(fixture["cases"]):
    open(f"{sys.argv[1]}/chat_ids_{index}.txt", "w").write(" ".join(map(str, case["ids"])) + "\n")
    open(f"{sys.argv[1]}/chat_text_{index}.txt", "w").write(case["rendered"])
    open(f"{sys.argv[1]}/chat_tokenizer_{index}.txt", "w").write(case["tokenizer"])
PY
for index in 0 1; do
  npm_dir=build/npm/node_modules/$(cat "$work/chat_tokenizer_$index.txt")/models
  "$tinygpt" tokenize --vocab "$npm_dir" --chat "$work/conversation.json" >"$work/chat_ids.txt" 2>"$work/err" \
    || fail "tokenize --chat ($npm_dir): $(cat "$work/err")"
  cmp -s "$work/chat_ids.txt" "$work/chat_ids_$index.txt" || fail "tokenize --chat ($npm_dir): ids differ from HF's"
  "$tinygpt" tokenize --vocab "$npm_dir" --chat "$work/conversation.json" --show >"$work/chat_text.txt" 2>/dev/null
  cmp -s "$work/chat_text.txt" "$work/chat_text_$index.txt" || fail "tokenize --chat --show ($npm_dir): text differs"
done
printf '{"messages": [{"role": "user"}]}' >"$work/bad_conversation.json"
expect_error "tokenize --chat without content" "message 0 must be an object with a \"role\" and a \"content\" string" \
  "$tinygpt" tokenize --vocab tests/fixtures/hf_llama/qwen3 --chat "$work/bad_conversation.json"

# Export in bf16 and read back: the fixtures' BF16 weights come back as they were (the same greedy text);
# the tokenizer files go along.
llama=tests/fixtures/hf_llama/llama
"$tinygpt" export --weights "$llama" --out "$work/exported" --dtype bf16 2>"$work/export.log" \
  || fail "export --dtype bf16: $(cat "$work/export.log")"
for file in config.json model.safetensors tokenizer.json tokenizer_config.json; do
  [[ -f $work/exported/$file ]] || fail "export of a Llama model: no $file"
done
"$tinygpt" sample --weights "$work/exported" --greedy --prompt "$(expected "$llama" text_prompt)" -n 8 2>/dev/null \
  | lossy >"$work/again.txt" || fail "sample of the export failed"
expected "$llama" text_output >"$work/expected.txt"
cmp -s "$work/again.txt" "$work/expected.txt" || fail "the export samples '$(cat "$work/again.txt")'"

# --quantize bf16 loads the BF16 matrices as stored; int8 quantizes; explain shows the Llama block.
"$tinygpt" eval --weights "$llama" --quantize bf16 --data "$work/text.txt" >/dev/null 2>"$work/q.log" \
  || fail "eval --quantize bf16: $(cat "$work/q.log")"
grep -q "weights in bfloat16" "$work/q.log" || fail "eval --quantize bf16: the header does not say bfloat16"
"$tinygpt" quantize --weights "$llama" --to int8 --out "$work/int8.safetensors" 2>"$work/q.log" \
  || fail "quantize --weights --to int8: $(cat "$work/q.log")"
"$tinygpt" sample --ckpt "$work/int8.safetensors" --prompt "ROMEO" -n 4 --seed 1 >/dev/null 2>"$work/q.log" \
  || fail "sample of the int8 checkpoint: $(cat "$work/q.log")"
"$tinygpt" explain --weights tests/fixtures/hf_llama/qwen3 --prompt "ROMEO: What" >"$work/explain.txt" 2>"$work/explain.log" \
  || fail "explain --weights: $(cat "$work/explain.log")"
grep -qi "rmsnorm" "$work/explain.txt" || fail "explain --weights: no RMSNorm stage in the trace"

# Fine-tune the Qwen3 fixture: its tokenizer goes into the checkpoint, which samples on its own.
"$tinygpt" train --init-from tests/fixtures/hf_llama/qwen3 --data "$work/text.txt" --block-size 16 --batch-size 2 \
  --iters 3 --eval-interval 3 --eval-iters 1 --out "$work/tuned" 2>"$work/tuned.log" \
  || fail "train --init-from a Qwen3 directory: $(cat "$work/tuned.log")"
"$tinygpt" sample --ckpt "$work/tuned" --prompt "ROMEO" -n 4 --seed 1 >/dev/null 2>"$work/err" \
  || fail "sample of the fine-tuned checkpoint: $(cat "$work/err")"

# A fresh Llama-style run on a text tokenised with a tokenizer.json directory.
"$tinygpt" train --data "$work/text.txt" --tokenizer tests/fixtures/hf_llama/qwen3 --config llama-small --block-size 16 \
  --batch-size 2 --iters 2 --eval-interval 2 --eval-iters 1 --out "$work/fresh" 2>"$work/fresh.log" \
  || fail "train --tokenizer DIR with a tokenizer.json: $(cat "$work/fresh.log")"
grep -q "hf tokenizer of 303 tokens" "$work/fresh.log" || fail "train --tokenizer DIR: the header does not name the hf tokenizer"

# Refusals: one sentence naming the file and the field; a template's own refusal in its words.
expect_error "a system message for Mistral's template" "raise_exception: Conversation roles must alternate" \
  "$tinygpt" sample --weights tests/fixtures/hf_llama/mistral --chat --system "Be brief." -p "Hello"
"$tinygpt" sample --weights tests/fixtures/hf_llama/qwen3 --chat --system "Be brief." -p "Hello" -n 2 --greedy \
  >/dev/null 2>"$work/err" || fail "sample --chat --system: $(cat "$work/err")"
mkdir -p "$work/no_tokenizer"
cp "$llama"/config.json "$llama"/model-0000*.safetensors "$llama"/model.safetensors.index.json "$work/no_tokenizer/"
expect_error "no tokenizer.json" "has no tokenizer.json; give the tokenizer's directory with --vocab DIR" \
  "$tinygpt" sample --weights "$work/no_tokenizer" --prompt "x"
cp -r tests/fixtures/hf_llama/qwen2 "$work/yarn"
python3 - "$work/yarn/config.json" <<'PY'
import json, sys
config = json.load(open(sys.argv[1]))
config["rope_scaling"] = {"rope_type": "yarn", "factor": 4.0}
json.dump(config, open(sys.argv[1], "w"))
PY
expect_error "rope_scaling yarn" "config.json: \"rope_scaling\" of type \"yarn\" is not implemented" \
  "$tinygpt" sample --weights "$work/yarn" --prompt "x"

finish "open-model CLI"
