#!/usr/bin/env bash
# LoRA from the command line (issue 38): train --init-from DIR --lora-rank R trains
# adapters on a frozen model and writes them in PEFT's layout beside its
# checkpoints; --lora DIR applies them to the base (eval computes them apart,
# sample merged); export --merge folds them into an ordinary model directory
# whose loss is the adapter's; --lora-base int8 (QLoRA) trains and resumes on
# int8 weights; the refusals are usage errors.
#
# usage: test_cli_lora.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

for _ in $(seq 60); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
for _ in $(seq 60); do echo "First Citizen: the patricians are good, we are poor citizens."; done >"$work/new.txt"
"$tinygpt" train --data "$work/corpus.txt" --layers 2 --heads 2 --dims 32 --block-size 16 --batch-size 8 --iters 60 \
  --lr 1e-2 --warmup 5 --eval-interval 60 --eval-iters 2 --out "$work/base" 2>"$work/base.log" \
  || fail "train the base: non-zero exit: $(cat "$work/base.log")"

lora=(--data "$work/new.txt" --init-from "$work/base" --lora-rank 4 --lora-alpha 8 --lr 1e-2 --warmup 2 --eval-interval 10
      --eval-iters 2)
"$tinygpt" train "${lora[@]}" --lora-targets attn,down --iters 20 --out "$work/ft" 2>"$work/ft.log" || fail "train --lora-rank: non-zero exit: $(cat "$work/ft.log")"
grep -q "^lora: rank 4, alpha 8 (update scaled by 2), dropout 0, on q, k, v, o and down of every layer: 2816 adapter parameters trained" \
  "$work/ft.log" || fail "train --lora-rank: the header lacks the lora line: $(grep -i lora "$work/ft.log")"
grep -q "on all 2816 trained parameters" "$work/ft.log" || fail "train --lora-rank: AdamW is not on the adapters alone"
[[ -f $work/ft/adapter_model.safetensors && -f $work/ft/adapter_config.json ]] || fail "train --lora-rank: no PEFT files in --out"
grep -q '"target_modules": \[' "$work/ft/adapter_config.json" || fail "adapter_config.json lacks target_modules"
grep -q '"c_attn"' "$work/ft/adapter_config.json" || fail "adapter_config.json: q, k, v of a GPT-2-layout model are not c_attn"
grep -q '"mlp.c_proj"' "$work/ft/adapter_config.json" || fail "adapter_config.json: down is not mlp.c_proj"
first=$(grep -m1 "^eval step 0 " "$work/ft.log" | sed 's/.*val loss \([0-9.]*\).*/\1/')
last=$(grep "^eval step 20 " "$work/ft.log" | sed 's/.*val loss \([0-9.]*\).*/\1/')
awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a - 0.05) }' || fail "train --lora-rank: val loss $first -> $last did not fall"

# The adapter on its base, the run's own checkpoint and the merged export score the same text alike.
score() { "$tinygpt" eval "$@" --data "$work/new.txt" 2>&1 | sed -n 's/^loss \([0-9.]*\) .*/\1/p'; }
applied=$(score --ckpt "$work/base" --lora "$work/ft")
own=$(score --ckpt "$work/ft")
base=$(score --ckpt "$work/base")
[[ -n $applied && $applied == "$own" ]] || fail "eval --lora ($applied) differs from the LoRA run's checkpoint ($own)"
[[ $applied != "$base" ]] || fail "eval --lora gives the base's loss: the adapter was not applied"
expect_exit "export without --merge" 2 "give --merge to fold them into the weights" \
  "$tinygpt" export --ckpt "$work/base" --lora "$work/ft" --out "$work/merged"
"$tinygpt" export --ckpt "$work/base" --lora "$work/ft" --merge --out "$work/merged" 2>"$work/export.log" \
  || fail "export --merge: non-zero exit: $(cat "$work/export.log")"
merged=$(score --weights "$work/merged")
awk -v a="$applied" -v b="$merged" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 1e-5 * a) }' \
  || fail "the merged export's loss $merged is not the adapter's $applied"
expect_exit "export --merge without adapters" 2 "no LoRA adapters to merge" \
  "$tinygpt" export --ckpt "$work/base" --merge --out "$work/plain"
"$tinygpt" sample --ckpt "$work/base" --lora "$work/ft" --tokens 20 --seed 3 >"$work/sample.txt" 2>"$work/sample.log" \
  || fail "sample --lora: non-zero exit: $(cat "$work/sample.log")"
grep -q "LoRA adapter $work/ft (rank 4, alpha 8, on q, k, v, o and down)" "$work/sample.log" \
  || fail "sample --lora: stderr does not name the adapter: $(cat "$work/sample.log")"

# --resume continues a LoRA run with its adapters.
"$tinygpt" train --data "$work/new.txt" --out "$work/ft" --resume --iters 30 2>"$work/resume.log" \
  || fail "train --resume of a LoRA run: non-zero exit: $(cat "$work/resume.log")"
grep -q "^lora: rank 4" "$work/resume.log" || fail "train --resume: the resumed run has no adapters"

# QLoRA: the frozen weights held in int8; the run resumes, and its loss is the base's in int8 with the adapter.
"$tinygpt" train "${lora[@]}" --lora-targets all-linear --lora-base int8 --iters 10 --out "$work/q" 2>"$work/q.log" \
  || fail "train --lora-base int8: non-zero exit: $(cat "$work/q.log")"
grep -q "frozen in int8 (QLoRA)" "$work/q.log" || fail "train --lora-base int8: the header does not say so: $(grep lora: "$work/q.log")"
"$tinygpt" train --data "$work/new.txt" --out "$work/q" --resume --iters 14 2>"$work/q_resume.log" \
  || fail "train --resume of a QLoRA run: non-zero exit: $(cat "$work/q_resume.log")"
qlora=$(score --ckpt "$work/q")
requantized=$(score --ckpt "$work/base" --lora "$work/q" --quantize int8)
[[ -n $qlora && $qlora == "$requantized" ]] || fail "the QLoRA run's loss ($qlora) is not the int8 base's with its adapter ($requantized)"
expect_exit "export --merge of a QLoRA run" 2 "merge them into the float32 base" \
  "$tinygpt" export --ckpt "$work/q" --merge --out "$work/qm"

# PEFT adapters on the Hugging Face fixtures: eval --weights BASE --lora DIR gives PyTorch's loss
# (tests/reference/make_lora_fixtures.py).
for model in gpt2 llama; do
  fixture=tests/fixtures/lora/$model
  read -r ids base expected < <(python3 -c "import json; e = json.load(open('$fixture/expected.json'))
print(','.join(map(str, e['ids'])), e['base'], repr(e['loss']))")
  got=$("$tinygpt" eval --weights "$base" --lora "$fixture" --ids "${ids//,/ }" 2>&1 | sed -n 's/^loss \([0-9.]*\) .*/\1/p')
  awk -v a="$expected" -v b="$got" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b != "" && d < 1e-6 * a) }' \
    || fail "eval --weights $base --lora $fixture: loss $got, PyTorch's $expected"
done

expect_exit "--lora-rank without --init-from" 2 "--lora-rank trains adapters on a trained model: give it with --init-from DIR" \
  "$tinygpt" train --data "$work/corpus.txt" --lora-rank 4 --out "$work/x"
expect_exit "--lora-targets gate on a GELU MLP" 1 "gate: this model's MLP (GELU) has no gate projection" \
  "$tinygpt" train "${lora[@]}" --lora-targets gate --iters 2 --out "$work/y"
expect_exit "--lora-targets q alone on GPT-2's layout" 1 "adapt all three (c_attn) or none" \
  "$tinygpt" train "${lora[@]}" --lora-targets q --iters 2 --out "$work/z"
expect_exit "--lora of a missing directory" 1 "no adapter_config.json" \
  "$tinygpt" eval --ckpt "$work/base" --lora "$work/nothing" --data "$work/new.txt"
# --quantize comes after the adapter is merged: the quantized weights are the adapted ones.
"$tinygpt" sample --ckpt "$work/base" --lora "$work/ft" --quantize int8 --tokens 2 >/dev/null 2>"$work/q.log" \
  || fail "sample --lora --quantize int8: non-zero exit: $(cat "$work/q.log")"
finish "LoRA CLI"
