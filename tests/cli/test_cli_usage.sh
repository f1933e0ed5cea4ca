#!/usr/bin/env bash
# Usage errors say what a flag accepts, in words, suggest the name that was
# meant, and exit with 2; runtime errors exit with 1; --version tells the build.
#
# usage: test_cli_usage.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

# Number-valued flags: the valid range in words, for a wrong number and for no number.
expect_exit "negative tokens" 2 "sample: --tokens must be an integer from 1 to 1000000, got -5" "$tinygpt" sample --tokens -5
expect_exit "tokens not a number" 2 "--tokens must be an integer from 1 to 1000000, got abc" "$tinygpt" sample --tokens abc
expect_exit "zero block size" 2 "train: --block-size must be a positive integer, got 0" "$tinygpt" train --block-size 0
expect_exit "zero threads" 2 "--threads must be a positive integer, got 0" "$tinygpt" eval --threads 0
expect_exit "top-p above 1" 2 "--top-p must be a number in (0, 1], got 1.5" "$tinygpt" sample --top-p 1.5
expect_exit "negative top-k" 2 "--top-k must be an integer >= 0, got -1" "$tinygpt" sample --top-k -1
expect_exit "explain top-k 0" 2 "--top-k must be a positive integer, got 0" "$tinygpt" explain --top-k 0 --prompt a
expect_exit "dropout of 1" 2 "--dropout must be a number in [0, 1), got 1" "$tinygpt" train --dropout 1
expect_exit "iters not a number" 2 "train: --iters must be an integer, got abc" "$tinygpt" train --iters abc
expect_exit "lr not a number" 2 "train: --lr must be a number, got fast" "$tinygpt" train --lr fast
expect_exit "vocabulary too small" 2 "--vocab-size must be an integer from 257 to 16777216, got 10" \
  "$tinygpt" bpe-train --data /dev/null --vocab-size 10 --out "$work/bpe"
if grep -q "0000000000" "$work/err"; then fail "a bound is printed as a long number: $(cat "$work/err")"; fi

# Mistyped names: the closest valid one.
expect_exit "mistyped command" 2 "unknown command 'sampel'; did you mean 'sample'?" "$tinygpt" sampel
expect_exit "unknown command" 2 "unknown command 'frobnicate' (tinygpt --help lists them)" "$tinygpt" frobnicate
expect_exit "mistyped flag" 2 "sample: unknown flag --tokns; did you mean --tokens?" "$tinygpt" sample --tokns 5
expect_exit "stray argument" 2 "train: unexpected argument 'extra'" "$tinygpt" train extra

# Flags that are fine alone but not together, in the user's words.
expect_exit "dims and heads" 2 "train: --dims 32 is not divisible by --heads 3" "$tinygpt" train --dims 32 --heads 3
expect_exit "preset's dims and heads" 2 "cpu-small's 128 channels are not divisible by --heads 3" \
  "$tinygpt" train --heads 3

# A directory where a file is expected: refused, naming it (exit 1: the flag was well-formed).
mkdir -p "$work/folder"
expect_exit "train on a directory" 1 "'$work/folder' is not a prepared dataset: it has no meta.json" \
  "$tinygpt" train --data "$work/folder" --out "$work/run"
expect_exit "bpe-train on a directory" 1 "'$work/folder' is a directory; give a text file" \
  "$tinygpt" bpe-train --data "$work/folder" --vocab-size 300 --out "$work/bpe"

# --version: the version, the build's vector extensions and the BLAS.
"$tinygpt" --version >"$work/version" 2>&1 || fail "--version: non-zero exit"
grep -q "^tinygpt [0-9]" "$work/version" || fail "--version: no version line: $(cat "$work/version")"
grep -q "^built for: " "$work/version" || fail "--version: no build extensions: $(cat "$work/version")"
grep -q "^BLAS: .*OpenBLAS.* kernels" "$work/version" || fail "--version: no BLAS line: $(cat "$work/version")"

# A run whose flags override the preset says so, and a warm-up longer than the run is said.
for _ in $(seq 20); do echo "abcabcabd abd"; done >"$work/tiny.txt"
"$tinygpt" train --data "$work/tiny.txt" --layers 1 --heads 2 --dims 8 --block-size 2 --batch-size 2 --iters 1 \
  --warmup 5 --eval-interval 1 --eval-iters 1 --out "$work/run" 2>"$work/train.log" ||
  fail "train with overrides: non-zero exit: $(cat "$work/train.log")"
grep -q "^model: cpu-small changed by --layers, --heads, --dims, --block-size, --batch-size: 1 layer, 2 heads, 8 channels, block 2," "$work/train.log" ||
  fail "train: the header does not say how the preset was changed: $(grep '^model' "$work/train.log")"
grep -q "note: --warmup 5 is longer than the schedule, which ends at step 1" "$work/train.log" ||
  fail "train: the capped warm-up is not said: $(cat "$work/train.log")"

# bpe-train on a text too short to learn one merge: refused, and nothing written.
: >"$work/empty.txt"
printf 'a' >"$work/one.txt"
for input in empty one; do
  expect_exit "bpe-train on the $input text" 1 "bpe-train: no merge learned from '$work/$input.txt'" \
    "$tinygpt" bpe-train --data "$work/$input.txt" --vocab-size 300 --out "$work/bpe_$input"
  [[ ! -e $work/bpe_$input ]] || fail "bpe-train on the $input text wrote $work/bpe_$input"
done

# Numbers out of int64 or not finite are refused, not clamped.
expect_exit "iters beyond int64" 2 "--iters must be an integer, got 99999999999999999999" \
  "$tinygpt" train --iters 99999999999999999999
expect_exit "infinite lr" 2 "--lr must be a number, got inf" "$tinygpt" train --lr inf

# A model too large for the machine is refused at once, with both figures, not after gigabytes of allocation.
expect_exit "model too large" 1 "GB of float32 weights alone; this machine has" \
  "$tinygpt" train --data "$work/tiny.txt" --layers 100000000 --block-size 2 --out "$work/huge"

# An output file that cannot be written is named as the user gave it, not as its temporary file.
expect_exit "unwritable output" 1 "'$work/no/such/dir/plot.svg'" \
  "$tinygpt" plot --metrics "$work/run/metrics.jsonl" --out "$work/no/such/dir/plot.svg"

finish "usage"
