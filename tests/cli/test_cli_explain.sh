#!/usr/bin/env bash
# End-to-end test of `tinygpt explain`: the walk-through of a checkpoint that
# `tinygpt train` wrote and of a fresh preset shows every stage; --layer, --head,
# --target and --html do what they say; misuse ends with one readable error line
# and a non-zero exit code.
#
# usage: test_cli_explain.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

# The stages of one block: GPT-2's, and the Llama-style block's of llama-small
# (RMSNorm, SwiGLU, grouped-query attention; no QK-norm).
gpt2_kinds=(ln_1 q k v scores mask weights attend concat c_proj residual_1 ln_2 c_fc gelu c_proj_mlp residual_2)
llama_kinds=(ln_1 q k v scores mask weights attend concat c_proj residual_1 ln_2 c_fc gate up swiglu c_proj_mlp residual_2)

# expect_stages NAME FILE KINDS BLOCK...: every stage's id appears, for the blocks
# named, KINDS naming the array of a block's stage kinds.
expect_stages() {
  local name=$1 file=$2
  local -n kinds=$3
  shift 3
  local ids=(tokens embed.tokens ln_f logits probabilities)
  for block in "$@"; do
    for kind in "${kinds[@]}"; do
      ids+=("block$block.$kind")
    done
  done
  for id in "${ids[@]}"; do
    grep -qF -- "[$id]" "$file" || fail "$name: stage $id is missing"
  done
  for section in "Predictions: the top" "Causality:"; do
    grep -qF -- "$section" "$file" || fail "$name: '$section' is missing"
  done
}

for _ in $(seq 40); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"

# A tiny checkpoint, as the README's train command writes one.
if ! "$tinygpt" train --data "$work/corpus.txt" --layers 2 --heads 2 --dims 16 --block-size 16 --batch-size 2 \
  --iters 4 --eval-interval 4 --eval-iters 1 --seed 5 --out "$work/run" 2>"$work/train.log"; then
  fail "train: non-zero exit: $(cat "$work/train.log")"
fi

"$tinygpt" explain --ckpt "$work/run" --prompt "First Cit" --target "izen" >"$work/all.txt" 2>"$work/all.log" \
  || fail "explain --ckpt: non-zero exit: $(cat "$work/all.log")"
expect_stages "explain --ckpt" "$work/all.txt" gpt2_kinds 0 1
grep -qF "[embed.positions]" "$work/all.txt" || fail "explain --ckpt: no learned positions stage"
for section in "Loss on the target" "perplexity" "Gradients: one backward" "block 1" "embeddings" \
  "(exactly 0: no position sees a later one)" "masked (key after query)"; do
  grep -qF -- "$section" "$work/all.txt" || fail "explain --ckpt --target: '$section' is missing"
done
grep -q "^explain: " "$work/all.log" || fail "explain: no description of the model on stderr"

# --layer and --head narrow what is shown.
"$tinygpt" explain --ckpt "$work/run" --prompt "poor" --layer 1 --head 0 --top-k 3 >"$work/one.txt" 2>/dev/null \
  || fail "explain --layer 1 --head 0: non-zero exit"
expect_stages "explain --layer 1" "$work/one.txt" gpt2_kinds 1
grep -qF "[block0." "$work/one.txt" && fail "explain --layer 1: block 0 is shown"
grep -qF "head 1" "$work/one.txt" && fail "explain --head 0: head 1 is shown"
grep -qF "the top 3 next tokens" "$work/one.txt" || fail "explain --top-k 3: not three predictions"

# A fresh preset (cpu-small: 4 blocks), its characters taken from the corpus.
"$tinygpt" explain --config cpu-small --data "$work/corpus.txt" --seed 3 --prompt "the good" --layer 3 \
  >"$work/fresh.txt" 2>/dev/null || fail "explain --config cpu-small: non-zero exit"
expect_stages "explain --config" "$work/fresh.txt" gpt2_kinds 3

# The Llama-style block (llama-small: 4 blocks, 2 KV heads for 4 query heads), with a target for the gradients.
"$tinygpt" explain --config llama-small --data "$work/corpus.txt" --seed 3 --prompt "the good" --target " cit" \
  --layer 2 >"$work/llama.txt" 2>"$work/llama.log" || fail "explain --config llama-small: non-zero exit: $(cat "$work/llama.log")"
expect_stages "explain --config llama-small" "$work/llama.txt" llama_kinds 2
for part in "[embed.rope]" "RMSNorm 1" "Final RMSNorm" "KV head 1 (query heads 2..3)" "half pairs" \
  "pairs are channels (i, i + HS/2)" "silu(gate)" "Gradients: one backward" "block 3" "embeddings"; do
  grep -qF -- "$part" "$work/llama.txt" || fail "explain --config llama-small: '$part' is missing"
done
grep -qF "[block2.gelu]" "$work/llama.txt" && fail "explain --config llama-small: a GELU stage in a SwiGLU block"
grep -qF "[block1." "$work/llama.txt" && fail "explain --config llama-small --layer 2: block 1 is shown"

# The web page.
"$tinygpt" explain --ckpt "$work/run" --prompt "we are" --html "$work/page.html" >"$work/html.out" 2>"$work/html.log" \
  || fail "explain --html: non-zero exit: $(cat "$work/html.log")"
[[ -s $work/page.html ]] || fail "explain --html: no page written"
grep -qi "<html" "$work/page.html" || fail "explain --html: the file is not a web page"
[[ ! -s $work/html.out ]] || fail "explain --html: unexpected stdout"

# Misuse: one line, non-zero exit.
expect_error "no prompt" "--prompt" "$tinygpt" explain --ckpt "$work/run"
expect_error "empty prompt" "--prompt is empty" "$tinygpt" explain --ckpt "$work/run" --prompt ""
expect_error "bad layer" "layer 7 does not exist: the model has 2 blocks" \
  "$tinygpt" explain --ckpt "$work/run" --prompt "First" --layer 7
expect_error "bad head" "head 2 does not exist" "$tinygpt" explain --ckpt "$work/run" --prompt "First" --head 2
expect_error "unknown character" "'Z'" "$tinygpt" explain --ckpt "$work/run" --prompt "Zebra"
expect_error "too long" "more than the model's block_size of 16" \
  "$tinygpt" explain --ckpt "$work/run" --prompt "First Citizen: we are accounted poor"
expect_error "no model" "explain" "$tinygpt" explain --prompt "First"

finish "tinygpt explain CLI"
