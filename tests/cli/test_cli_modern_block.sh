#!/usr/bin/env bash
# train with the Llama-style block's flags (issue 35): every flag reaches the
# model and its checkpoint; resume, sample with and without the KV cache, eval
# --cached and quantize work on it; explain traces it stage by stage; and
# a combination the block cannot build is a usage error naming the flags.
#
# usage: test_cli_modern_block.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

for _ in $(seq 60); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
shape=(--layers 2 --heads 4 --dims 32 --block-size 8 --batch-size 2)
block=(--positional rope --norm rmsnorm --mlp swiglu --mlp-hidden 48 --kv-heads 2 --head-dim 6 --qk-norm --bias qkv
       --tie-embeddings off --rope-theta 500 --rope-scaling llama3:4,1,4,8 --rope-pairing half)
run=(--data "$work/corpus.txt" --eval-interval 3 --eval-iters 2 --seed 5)

"$tinygpt" train "${run[@]}" "${shape[@]}" "${block[@]}" --iters 6 --out "$work/run" 2>"$work/train.log" \
  || fail "train with every block flag: non-zero exit: $(cat "$work/train.log")"
for part in "RMSNorm" "swiglu MLP (hidden 48)" "2 KV heads" "head size 6" "QK-norm" "RoPE theta 500 (half pairs, llama3:4,1,4,8)" \
            "biases qkv" "untied head"; do
  grep -qF "$part" "$work/train.log" || fail "train: the run header lacks '$part': $(grep '^model:' "$work/train.log")"
done
"$tinygpt" train --data "$work/corpus.txt" --out "$work/run" --resume --iters 9 2>"$work/resume.log" \
  || fail "train --resume: non-zero exit: $(cat "$work/resume.log")"
grep -q "resuming .* at step 6" "$work/resume.log" || fail "train --resume: did not resume at step 6"
"$tinygpt" train --data "$work/corpus.txt" --out "$work/run" --resume --iters 9 --mlp swiglu --kv-heads 2 2>/dev/null \
  || fail "train --resume: the run's own --mlp and --kv-heads were refused"
expect_error "resume changes the block" "--mlp cannot change in a resumed run" \
  "$tinygpt" train --data "$work/corpus.txt" --out "$work/run" --resume --iters 12 --mlp gelu

"$tinygpt" sample --ckpt "$work/run" --prompt "First" --tokens 20 --greedy >"$work/cached.txt" 2>/dev/null \
  || fail "sample: non-zero exit"
"$tinygpt" sample --ckpt "$work/run" --prompt "First" --tokens 20 --greedy --no-cache >"$work/uncached.txt" 2>/dev/null \
  || fail "sample --no-cache: non-zero exit"
cmp -s "$work/cached.txt" "$work/uncached.txt" || fail "sample: greedy output differs with and without the KV cache"
# The cached path sums in another order (one query at a time): the same loss to float rounding.
plain=$("$tinygpt" eval --ckpt "$work/run" --data "$work/corpus.txt" 2>/dev/null | grep -o 'loss [0-9.]*' | head -1 | cut -d' ' -f2)
cached=$("$tinygpt" eval --ckpt "$work/run" --data "$work/corpus.txt" --cached 2>/dev/null | grep -o 'loss [0-9.]*' | head -1 | cut -d' ' -f2)
awk -v a="$plain" -v b="$cached" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a > 0 && d < 1e-6 * a) }' \
  || fail "eval --cached: loss '$cached' is not the uncached '$plain' to float rounding"
for format in bf16 int8; do
  "$tinygpt" quantize --ckpt "$work/run" --to "$format" --out "$work/$format" 2>/dev/null || fail "quantize --to $format failed"
  "$tinygpt" sample --ckpt "$work/$format" --prompt "First" --tokens 10 >/dev/null 2>&1 || fail "sample of the $format model failed"
done
"$tinygpt" explain --ckpt "$work/run" --prompt "First" --target " C" >"$work/explain.txt" 2>/dev/null \
  && grep -qF "[block1.k_norm]" "$work/explain.txt" && grep -qF "[block1.swiglu]" "$work/explain.txt" \
  || fail "explain on the Llama-style block: non-zero exit, or no QK-norm or SwiGLU stage"

expect_exit "kv-heads not dividing heads" 2 "--kv-heads 3 does not divide the 4 heads" \
  "$tinygpt" train "${run[@]}" "${shape[@]}" --kv-heads 3 --out "$work/bad"
expect_exit "norm-weight off with LayerNorm" 2 "--norm-weight off needs --norm rmsnorm" \
  "$tinygpt" train "${run[@]}" "${shape[@]}" --norm-weight off --out "$work/bad"
expect_exit "rope flags without rope" 2 "need --positional rope" \
  "$tinygpt" train "${run[@]}" "${shape[@]}" --rope-theta 100 --out "$work/bad"
expect_exit "a rope scaling of no known form" 2 "--rope-scaling yarn:4 is not one of the known forms (none, linear:F or" \
  "$tinygpt" train "${run[@]}" "${shape[@]}" --positional rope --rope-scaling yarn:4 --out "$work/bad"
expect_exit "an odd head size with rope" 2 "with --positional rope the head size must be even (RoPE turns pairs of channels), but --head-dim 5" \
  "$tinygpt" train "${run[@]}" "${shape[@]}" --positional rope --head-dim 5 --out "$work/bad"
expect_exit "an unknown mlp" 2 "--mlp" "$tinygpt" train "${run[@]}" "${shape[@]}" --mlp geglu --out "$work/bad"
[[ ! -e $work/bad ]] || fail "a refused run wrote $work/bad"

finish "modern block CLI"
