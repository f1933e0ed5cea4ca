#!/usr/bin/env bash
# The course (docs/course/, scripts/course.sh) in a few steps per chapter: five
# runs, each the model its chapter says (0 layers; one head without an MLP; four
# heads; a block; four blocks), each with its step-through page and a row in the
# table; a second call reads the runs back instead of training over them; bad
# flags end with one line and exit 2. Also train's refusals of what the course's
# switches cannot build.
#
# usage: test_course.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"
[[ -f ../shared/data/tinyshakespeare.txt ]] || { echo "skipped: the course reads ../shared/data/tinyshakespeare.txt"; exit 77; }
data=../shared/data/tinyshakespeare.txt

bash scripts/course.sh --iters 4 --out "$work/course" --tinygpt "$tinygpt" --data "$data" >"$work/course.out" 2>&1 \
  || fail "course.sh: non-zero exit: $(tail -5 "$work/course.out")"
header_of() { grep -m1 '^model:' "$work/course/$1/train.log"; }
header_of 01-bigram | grep -q "0 layers" || fail "chapter 1 is not a model of 0 layers: $(header_of 01-bigram)"
header_of 02-one-head | grep -q "1 layer, 1 head,.*no MLP" || fail "chapter 2 is not one head without an MLP: $(header_of 02-one-head)"
header_of 03-multi-head | grep -q "1 layer, 4 heads,.*no MLP" || fail "chapter 3: $(header_of 03-multi-head)"
header_of 04-block | grep -q "1 layer, 4 heads" || fail "chapter 4: $(header_of 04-block)"
header_of 04-block | grep -q "no MLP" && fail "chapter 4 has no MLP: $(header_of 04-block)"
header_of 05-gpt | grep -q "4 layers, 4 heads" || fail "chapter 5: $(header_of 05-gpt)"
for chapter in 01-bigram 02-one-head 03-multi-head 04-block 05-gpt; do
  [[ -s $work/course/$chapter/explain.html ]] || fail "$chapter: no step-through page"
  grep -qE "^\| $chapter +\| +[0-9.]+M \| +[0-9]+\.[0-9]+ \|" "$work/course.out" || fail "$chapter: no row in the table: $(tail -9 "$work/course.out")"
done
# The step-through is of exactly that model: the bigram's has no block, the attention-only ones no MLP stage.
stages() { grep -o '<section class="stage" id="[^"]*"' "$work/course/$1/explain.html" | sed 's/.*id="//; s/"$//' | tr '\n' ' '; }
[[ $(stages 01-bigram) == "tokens embed.tokens embed.rope ln_f logits probabilities " ]] || fail "the bigram's stages: $(stages 01-bigram)"
[[ $(stages 02-one-head) == *"block0.residual_1 ln_f"* ]] || fail "one head: not attention only: $(stages 02-one-head)"
[[ $(stages 04-block) == *"block0.ln_2 block0.c_fc block0.gelu block0.c_proj_mlp block0.residual_2 ln_f"* ]] \
  || fail "the block chapter's stages: $(stages 04-block)"
grep -q "^--- Residual add (attention)  \[block0.residual_1\]" "$work/course/03-multi-head/explain.txt" \
  || fail "multi-head: no walk-through in the terminal's form"

# Again: nothing is trained over; the table is the same.
before=$(stat -c %Y "$work/course/05-gpt/best.safetensors")
bash scripts/course.sh --iters 4 --out "$work/course" --tinygpt "$tinygpt" --data "$data" >"$work/again.out" 2>&1 \
  || fail "course.sh, second call: $(tail -5 "$work/again.out")"
grep -q "05-gpt: already trained" "$work/again.out" || fail "the second call did not read the runs back"
[[ $(stat -c %Y "$work/course/05-gpt/best.safetensors") == "$before" ]] || fail "the second call trained over a run"
diff <(grep '^| 0' "$work/course.out") <(grep '^| 0' "$work/again.out") >/dev/null || fail "the second call's table differs"

bash scripts/course.sh --iters zero >"$work/bad.out" 2>&1
[[ $? -eq 2 ]] && grep -q "iters must be a positive integer" "$work/bad.out" || fail "course.sh --iters zero: $(cat "$work/bad.out")"
bash scripts/course.sh --speed 3 >"$work/bad.out" 2>&1
[[ $? -eq 2 ]] && grep -q "unknown flag '--speed'" "$work/bad.out" || fail "course.sh --speed: $(cat "$work/bad.out")"

# train refuses what the switches cannot build, naming the flags.
expect_usage_error() {  # expected-words, train flags...
  local words=$1
  shift
  "$tinygpt" train --data "$data" --iters 1 --out "$work/refused" "$@" >/dev/null 2>"$work/refused.err"
  [[ $? -eq 2 ]] && grep -q -- "$words" "$work/refused.err" || fail "train $*: expected exit 2 and '$words': $(cat "$work/refused.err")"
  [[ -e $work/refused ]] && fail "train $*: refused, yet wrote $work/refused"
}
expect_usage_error "needs --positional rope" --layers 0
expect_usage_error "--mlp none has none" --mlp none --mlp-hidden 64
finish "the course"
