#!/usr/bin/env bash
# Encode throughput of our GPT-2 tokenizer beside tiktoken's (npm, WASM build,
# run by node), on the same inputs in the same run, one thread each.
#
#   bench/tokenizer_vs_tiktoken.sh [BUILD_DIR] [ROUNDS]     (from the project root)
#
# Inputs: tiny Shakespeare, and ~1 MB of mixed-Unicode text written by
# tokenizer_make_mixed_text.py. The machine drifts between fast and slow
# states, so the two tools alternate (ours, theirs, ours, theirs, ...) for
# ROUNDS rounds (default 7); each run reports the median of 5 timed encodes
# after one warm-up, and this script prints the median over rounds of each
# and their ratio. Needs node and npm; tiktoken is installed into
# TIKTOKEN_DIR (default /tmp/tiktoken-ref), never into the repository.
set -euo pipefail
build_dir="${1:-build}"
rounds="${2:-7}"
here="$(cd "$(dirname "$0")" && pwd)"
gpt2_dir="../shared/data/gpt2"
ours="$build_dir/bench/tokenizer_throughput"
[ -x "$ours" ] || { echo "build $ours first: cmake --build $build_dir --target tokenizer_throughput" >&2; exit 1; }

export TIKTOKEN_DIR="${TIKTOKEN_DIR:-/tmp/tiktoken-ref}"
if [ ! -d "$TIKTOKEN_DIR/node_modules/tiktoken" ]; then
  mkdir -p "$TIKTOKEN_DIR"
  (cd "$TIKTOKEN_DIR" && npm install --no-audit --no-fund --silent tiktoken@1 >&2)
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
python3 "$here/tokenizer_make_mixed_text.py" "$scratch/mixed_unicode.txt"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "tiktoken $(node -p "require('$TIKTOKEN_DIR/node_modules/tiktoken/package.json').version"), node $(node --version), $rounds rounds"
printf "%-22s %12s %12s %8s %10s\n" "input" "ours MB/s" "tiktoken" "ratio" "tokens"
for input in ../shared/data/tinyshakespeare.txt "$scratch/mixed_unicode.txt"; do
  : > "$scratch/ours.txt"
  : > "$scratch/theirs.txt"
  for _ in $(seq "$rounds"); do
    line="$("$ours" "$gpt2_dir" "$input" 5)"
    echo "$line" | awk '{ print $2 }' >> "$scratch/ours.txt"
    tokens_ours="$(echo "$line" | awk '{ print $4 }')"
    line="$(node "$here/tokenizer_tiktoken_throughput.cjs" "$input" 5)"
    echo "$line" | awk '{ print $2 }' >> "$scratch/theirs.txt"
    tokens_theirs="$(echo "$line" | awk '{ print $4 }')"
  done
  [ "$tokens_ours" = "$tokens_theirs" ] || echo "warning: token counts differ: $tokens_ours vs $tokens_theirs" >&2
  ours_median="$(median < "$scratch/ours.txt")"
  theirs_median="$(median < "$scratch/theirs.txt")"
  printf "%-22s %12.2f %12.2f %7.1fx %10s\n" "$(basename "$input")" "$ours_median" "$theirs_median" \
    "$(echo "$ours_median $theirs_median" | awk '{ print $1 / $2 }')" "$tokens_ours"
done
