#!/usr/bin/env bash
# tinygpt quantize end to end: a small trained char-level model written in bf16
# and int8, sampled (with the KV cache equal to without), evaluated (the loss
# within 0.1% / 1% of float32's), explained, the --quantize load-time flag
# giving the same numbers as the written file, the error lines of misuse; and
# train --dtype bf16 (mixed precision) learning as float32 does.
#
# usage: test_cli_quantize.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

for _ in $(seq 80); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
"$tinygpt" train --data "$work/corpus.txt" --layers 2 --heads 2 --dims 64 --block-size 32 --batch-size 4 \
  --iters 40 --eval-interval 20 --eval-iters 2 --seed 5 --out "$work/run" 2>"$work/train.log" \
  || fail "train: non-zero exit: $(cat "$work/train.log")"

loss_of() { "$tinygpt" eval "$@" --data "$work/corpus.txt" --max-tokens 2000 2>/dev/null | awk '{print $2}'; }
float_loss=$(loss_of --ckpt "$work/run")
[[ -n $float_loss ]] || fail "eval: no loss for the float32 model"

for format in bf16 int8; do
  "$tinygpt" quantize --ckpt "$work/run" --to "$format" --out "$work/$format" 2>"$work/quantize.log" \
    || fail "quantize --to $format: non-zero exit: $(cat "$work/quantize.log")"
  [[ -f $work/$format/model.safetensors ]] || fail "quantize --to $format: no $work/$format/model.safetensors"
  grep -q "weight matrices to" "$work/quantize.log" || fail "quantize --to $format: no summary: $(cat "$work/quantize.log")"

  loss=$(loss_of --ckpt "$work/$format")
  bound=$([[ $format == bf16 ]] && echo 0.001 || echo 0.01)
  python3 -c "import sys; f, q, b = map(float, sys.argv[1:]); sys.exit(0 if abs(q - f) <= b * f and q != f else 1)" \
    "$float_loss" "$loss" "$bound" || fail "eval --ckpt $format: loss $loss not within $bound of float32's $float_loss"
  [[ $(loss_of --ckpt "$work/run" --quantize "$format") == "$loss" ]] \
    || fail "eval --quantize $format: a different loss from the quantized file's"
  cached_loss=$(loss_of --ckpt "$work/$format" --cached)  # through the KV cache, as generation computes
  python3 -c "import sys; f, q, b = map(float, sys.argv[1:]); sys.exit(0 if abs(q - f) <= b * f else 1)" \
    "$float_loss" "$cached_loss" "$bound" || fail "eval --cached $format: loss $cached_loss not within $bound of $float_loss"

  "$tinygpt" sample --ckpt "$work/$format" --prompt "First" --tokens 40 --greedy >"$work/cached.txt" 2>"$work/sample.log" \
    || fail "sample --ckpt $format: non-zero exit: $(cat "$work/sample.log")"
  grep -q "weights in" "$work/sample.log" || fail "sample --ckpt $format: stderr does not say the weight format"
  "$tinygpt" sample --ckpt "$work/$format" --prompt "First" --tokens 40 --greedy --no-cache >"$work/uncached.txt" 2>/dev/null
  cmp -s "$work/cached.txt" "$work/uncached.txt" || fail "sample --ckpt $format: greedy text differs with and without the cache"
  [[ $(wc -c <"$work/cached.txt") -eq 45 ]] || fail "sample --ckpt $format: expected 45 characters"

  "$tinygpt" explain --ckpt "$work/$format" --prompt "First Cit" >"$work/explain.txt" 2>&1 \
    || fail "explain --ckpt $format: non-zero exit: $(tail -3 "$work/explain.txt")"
done

# The file is smaller: int8 about 0.3 of float32 (LayerNorm and biases stay float32).
float_bytes=$(stat -c %s "$work/run/best.safetensors")
int8_bytes=$(stat -c %s "$work/int8/model.safetensors")
[[ $((int8_bytes * 10)) -lt $((float_bytes * 4)) ]] || fail "quantize: int8 file $int8_bytes bytes, float32 $float_bytes"

expect_exit "quantize bad --to" 2 "--to" "$tinygpt" quantize --ckpt "$work/run" --to int4 --out "$work/x"
expect_exit "quantize no --to" 2 "--to is required" "$tinygpt" quantize --ckpt "$work/run" --out "$work/x"
expect_exit "sample bad --quantize" 2 "--quantize" "$tinygpt" sample --ckpt "$work/run" --quantize fp8 --prompt a
expect_error "quantize twice" "the model's weights are int8 already" \
  "$tinygpt" quantize --ckpt "$work/int8" --to bf16 --out "$work/twice"
expect_error "quantize over the training checkpoint" "is a training checkpoint" \
  "$tinygpt" quantize --ckpt "$work/run/best.safetensors" --to int8 --out "$work/run"
expect_error "resume a quantized model" "holds int8 weights (tinygpt quantize), which are for inference" \
  "$tinygpt" train --resume --out "$work/int8" --data "$work/corpus.txt" --iters 50
expect_error "fine-tune a quantized model" "fine-tune from the float32 model" \
  "$tinygpt" train --init-from "$work/int8" --data "$work/corpus.txt" --iters 2 --out "$work/tuned"
expect_error "export a quantized model" "export the float32 model" \
  "$tinygpt" export --ckpt "$work/bf16" --out "$work/exported"
expect_error "sample --quantize on a quantized model" "the model's weights are bfloat16 already" \
  "$tinygpt" sample --ckpt "$work/bf16" --quantize int8 --prompt a

# Mixed-precision training: bf16 products, float32 weights; it learns as float32 does.
"$tinygpt" train --data "$work/corpus.txt" --layers 2 --heads 2 --dims 64 --block-size 32 --batch-size 4 \
  --iters 40 --eval-interval 20 --eval-iters 2 --seed 5 --dtype bf16 --out "$work/mixed" 2>"$work/mixed.log" \
  || fail "train --dtype bf16: non-zero exit: $(cat "$work/mixed.log")"
grep -q "bf16 matrix products (mixed precision)" "$work/mixed.log" || fail "train --dtype bf16: not said on stderr"
mixed_loss=$(loss_of --ckpt "$work/mixed")
python3 -c "import sys; f, m = map(float, sys.argv[1:]); sys.exit(0 if abs(m - f) <= 0.05 * f else 1)" \
  "$float_loss" "$mixed_loss" || fail "train --dtype bf16: loss $mixed_loss not within 5% of float32's $float_loss"
# The dtype is a saved setting: a resumed run keeps it without --dtype.
"$tinygpt" train --data "$work/corpus.txt" --out "$work/mixed" --resume --iters 42 2>"$work/resumed.log" \
  || fail "train --resume of a bf16 run: non-zero exit: $(cat "$work/resumed.log")"
grep -q "bf16 matrix products (mixed precision)" "$work/resumed.log" || fail "train --resume: the bf16 dtype was not kept"
expect_exit "train bad --dtype" 2 "--dtype" "$tinygpt" train --data "$work/corpus.txt" --dtype fp16 --out "$work/y"

finish "quantize"
