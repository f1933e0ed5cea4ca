#!/usr/bin/env bash
# Checks our GPT-2 tokenizer against npm's tiktoken.
#
#   tiktoken_reference.sh
#       regenerates tests/fixtures/tokenizer/tiktoken_gpt2.json, the fixture
#       that test_tiktoken_reference.cpp compares against
#   tiktoken_reference.sh --exhaustive path/to/tinygpt [GPT2_DIR]
#       encodes every Unicode code point in three contexts (about 23 MB of
#       text) with both tiktoken and `tinygpt tokenize`, and compares the ids
#
# tiktoken is installed into a scratch directory outside the repository
# (TIKTOKEN_DIR, default /tmp/tiktoken-ref), so no node_modules is ever committed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export TIKTOKEN_DIR="${TIKTOKEN_DIR:-/tmp/tiktoken-ref}"
if [ ! -d "$TIKTOKEN_DIR/node_modules/tiktoken" ]; then
  mkdir -p "$TIKTOKEN_DIR"
  (cd "$TIKTOKEN_DIR" && npm install --no-audit --no-fund --silent tiktoken@1 >&2)
fi

if [ "${1:-}" != "--exhaustive" ]; then
  node "$here/tiktoken_reference.cjs" "$@"
  exit 0
fi

tinygpt="${2:?usage: $0 --exhaustive path/to/tinygpt [GPT2_DIR]}"
gpt2_dir="${3:-$here/../../../shared/data/gpt2}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# Each code point c (surrogates aside) as "c'll cx 1c1\n": after a contraction
# test, beside a letter and between digits, which tells letters, numbers,
# spaces and symbols apart.
python3 - "$scratch/all.txt" <<'PY'
import sys
with open(sys.argv[1], "w", encoding="utf-8") as out:
    for c in range(0x110000):
        if 0xD800 <= c <= 0xDFFF:
            continue
        ch = chr(c)
        out.write(ch + "'ll " + ch + "x 1" + ch + "1\n")
PY
node "$here/tiktoken_reference.cjs" --ids "$scratch/all.txt" > "$scratch/theirs.txt"
"$tinygpt" tokenize --gpt2 "$gpt2_dir" < "$scratch/all.txt" > "$scratch/ours.txt"
if cmp -s "$scratch/ours.txt" "$scratch/theirs.txt"; then
  echo "identical ids for all $(wc -w < "$scratch/ours.txt") tokens of every code point"
else
  echo "ids differ from tiktoken's: $(cmp "$scratch/ours.txt" "$scratch/theirs.txt")" >&2
  exit 1
fi
