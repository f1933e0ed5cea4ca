#!/usr/bin/env bash
# The pictures: `tinygpt explain --html` writes a self-contained page that
# headless Chromium loads without script errors or requests and that shows every
# stage (its inline script reports both into <body data-rendered data-errors>),
# checked by tests/cli/html_page_test.mjs: nothing overlapping at 1400 px, the
# diagram's links, tokens' spaces as '␣', the GELU legend clear of its curve, and
# a 100-token prompt's block drawn at all 100 positions with the exact values of
# `explain --json` under the pointer. `tinygpt plot` draws a training run's
# metrics file as an SVG; misuse of plot ends with one readable error line.
#
# usage: test_html_report.sh path/to/tinygpt   (CTest passes the built binary)
# Needs Debian's chromium, Node.js and puppeteer-core (bash scripts/setup.sh --test).
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"
require_chromium

for _ in $(seq 40); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
echo "<b> & \"i\" 'u'" >>"$work/corpus.txt"  # characters that HTML must escape, for the prompt

# --- explain --html, opened in a browser ------------------------------------
"$tinygpt" explain --config cpu-small --data "$work/corpus.txt" --seed 3 --prompt "we are <poor> & \"good\"" \
  --target " 'citizens'" --html "$work/page.html" >"$work/explain.out" 2>"$work/explain.log" \
  || fail "explain --html: non-zero exit: $(cat "$work/explain.log")"
# cpu-small: tokens, 3 embedding stages (learned positions), 4 blocks of 16 stages, ln_f, logits, probabilities.
expected_stages=$((1 + 3 + 4 * 16 + 3))
sections=$(grep -o '<section class="stage"' "$work/page.html" | wc -l)
[[ $sections -eq $expected_stages ]] || fail "explain --html: $sections stage sections, expected $expected_stages"
grep -qE 'https?://' "$work/page.html" && fail "explain --html: the page refers to the network: $(grep -oE 'https?://[^"]*' "$work/page.html" | head -3)"
grep -qF '<poor>' "$work/page.html" && fail "explain --html: the prompt's '<poor>' is not escaped"
grep -qF 'Colour scale: each head its own' "$work/page.html" || fail "explain --html: no per-head colour scale printed"
for part in "the GELU curve and this prompt&#39;s inputs" "before: the input of block0.ln_1" "the most likely tokens after position"; do
  grep -qF -- "$part" "$work/page.html" || fail "explain --html: '$part' is missing"
done
"$tinygpt" explain --config cpu-small --data "$work/corpus.txt" --seed 3 --prompt "we are" --layer 0 --shared-scale \
  --html "$work/shared.html" 2>"$work/shared.log" || fail "explain --shared-scale: non-zero exit: $(cat "$work/shared.log")"
[[ $(grep -c 'Colour scale: one for all heads, from' "$work/shared.html") -eq 3 ]] \
  || fail "explain --shared-scale: scores, mask and weights should each print one shared scale"

# The Llama-style block's page: llama-small has 4 blocks of 18 stages (RMSNorm,
# gate, up and swiglu in place of gelu) and RoPE: tokens, embed.tokens, embed.rope.
"$tinygpt" explain --config llama-small --data "$work/corpus.txt" --seed 3 --prompt "we are poor" --target " citizens" \
  --html "$work/llama.html" 2>"$work/llama.log" || fail "explain --config llama-small --html: non-zero exit: $(cat "$work/llama.log")"
llama_stages=$((1 + 2 + 4 * 18 + 3))
sections=$(grep -o '<section class="stage"' "$work/llama.html" | wc -l)
[[ $sections -eq $llama_stages ]] || fail "explain --config llama-small --html: $sections stage sections, expected $llama_stages"
for part in 'id="block3.swiglu"' 'id="block0.gate"' "before: the input of block0.ln_1" "KV head 1 (query heads 2..3)" \
  "2 KV heads for 4 query heads"; do
  grep -qF -- "$part" "$work/llama.html" || fail "explain --config llama-small --html: '$part' is missing"
done

# A run of 2 blocks of 4 heads and a context of 128, for a 100-token prompt (and plot below):
# its two blocks' heatmaps (2 x 3 x 4 x 100^2 cells) pass the page's bound, one block's just fit.
if ! "$tinygpt" train --data "$work/corpus.txt" --layers 2 --heads 4 --dims 16 --block-size 128 --batch-size 2 \
  --iters 4 --eval-interval 2 --eval-iters 1 --seed 5 --out "$work/run" 2>"$work/train.log"; then
  fail "train: non-zero exit: $(cat "$work/train.log")"
fi
long_prompt=$(head -c 400 "$work/corpus.txt" | tr '\n' ' ' | cut -c1-100)
for format in html json; do
  "$tinygpt" explain --ckpt "$work/run" --prompt "$long_prompt" --layer 1 --$format "$work/long.$format" \
    2>"$work/long.log" || fail "explain --layer 1 --$format (100 tokens): non-zero exit: $(cat "$work/long.log")"
done
"$tinygpt" explain --ckpt "$work/run" --prompt "$long_prompt" --html "$work/long_all.html" 2>"$work/long.log" \
  || fail "explain --html (100 tokens): non-zero exit: $(cat "$work/long.log")"
grep -qF 'The heatmaps show the first 70 of the 100 positions' "$work/long_all.html" \
  || fail "explain --html (100 tokens, 2 blocks): the page does not say that its heatmaps are cut to 70 positions"
grep -qF 'The heatmaps show the first' "$work/long.html" && fail "explain --html --layer 1 (100 tokens): heatmaps cut"

node tests/cli/html_page_test.mjs "$work" "$work/page.html:$expected_stages" "$work/llama.html:$llama_stages" \
  "$work/long.html" "$work/long.json" 100 || fail "explain --html in Chromium (above)"

# --- plot ---------------------------------------------------------------------
"$tinygpt" plot --metrics "$work/run/metrics.jsonl" --out "$work/loss.svg" >"$work/plot.out" 2>"$work/plot.log" \
  || fail "plot: non-zero exit: $(cat "$work/plot.log")"
grep -qF '<svg xmlns="http://www.w3.org/2000/svg"' "$work/loss.svg" || fail "plot: not an SVG file"
for part in "run: val loss" "train loss (every step)" "val loss (evaluation)" "learning rate"; do
  grep -qF -- "$part" "$work/loss.svg" || fail "plot: '$part' is missing"
done
grep -qF "4 steps and 3 evaluations" "$work/plot.log" || fail "plot: unexpected summary: $(cat "$work/plot.log")"
"$tinygpt" plot --metrics "$work/run" --out "$work/folder.svg" 2>/dev/null || fail "plot --metrics FOLDER: non-zero exit"
cmp -s "$work/loss.svg" "$work/folder.svg" || fail "plot --metrics FOLDER: not the same picture as its metrics.jsonl"

printf '{"iter": 1, "train_loss": 2.5, "lr": 0.001}\n{"iter": 2, "train_lo\n' >"$work/broken.jsonl"
: >"$work/empty.jsonl"
expect_error "plot: no file" "plot: metrics '$work/none.jsonl': cannot open the file" \
  "$tinygpt" plot --metrics "$work/none.jsonl" --out "$work/x.svg"
expect_error "plot: bad line" "broken.jsonl' line 2: not a JSON object" \
  "$tinygpt" plot --metrics "$work/broken.jsonl" --out "$work/x.svg"
expect_error "plot: no data" "empty.jsonl': no step or evaluation lines" \
  "$tinygpt" plot --metrics "$work/empty.jsonl" --out "$work/x.svg"
expect_error "plot: no --out" "--out" "$tinygpt" plot --metrics "$work/run/metrics.jsonl"

finish "explain --html and plot"
