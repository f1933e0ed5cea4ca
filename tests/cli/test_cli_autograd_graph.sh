#!/usr/bin/env bash
# explain --graph: the autograd graph of micrograd's neuron and of one block of a
# fresh cpu-small, written as a self-contained page (no network); in headless
# Chromium (tests/cli/autograd_graph_page_test.mjs) it loads without a script
# error or a request, stepping backward highlights the newest ops in turn with
# their gradients, and nothing overlaps at 1400 px; misuse ends with one line.
#
# usage: test_cli_autograd_graph.sh path/to/tinygpt   (CTest passes the built binary)
# Needs Debian's chromium and build/npm's puppeteer-core (bash scripts/setup.sh --test).
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"
require_chromium

# A fresh cpu-small's characters: this text's, with < > & " ' (the page must escape the prompt).
yes "we are poor citizens; <b> & \"i\" 'u' tell how the gradient flows back." | head -n 30 >"$work/corpus.txt"
fresh=(--config cpu-small --data "$work/corpus.txt" --seed 3)

"$tinygpt" explain "${fresh[@]}" --prompt "we are <poor>" --target " citizens" --layer 1 --graph "$work/graph.html" \
  >"$work/graph.out" 2>"$work/graph.log" || fail "explain --graph: non-zero exit: $(cat "$work/graph.log")"
[[ ! -s $work/graph.out ]] || fail "explain --graph: unexpected stdout: $(head -c 300 "$work/graph.out")"
grep -qF "wrote $work/graph.html" "$work/graph.log" || fail "explain --graph: no 'wrote' line: $(cat "$work/graph.log")"
grep -qE 'https?://' "$work/graph.html" && fail "explain --graph: the page refers to the network"
for part in 'A neuron: o = tanh(x1*w1 + x2*w2 + b)' 'Block 1 of 4 on ' 'blocks.1.attn.qkv.weight (leaf)' \
  'x (the stream entering block 1) (leaf)' '>grad -1.5<' 'softmax' 'reverse creation order'; do
  grep -qF -- "$part" "$work/graph.html" || fail "explain --graph: '$part' is missing"
done
grep -qF '<poor>' "$work/graph.html" && fail "explain --graph: the prompt's '<poor>' is not escaped"
grep -qF '&quot;we are &lt;poor&gt;&quot; + &quot; citizens&quot;' "$work/graph.html" || fail "explain --graph: the prompt is not shown"
grep -qF 'blocks.0.' "$work/graph.html" && fail "explain --graph --layer 1: block 0's parameters are drawn"

node tests/cli/autograd_graph_page_test.mjs "$work/graph.html" "$work" || fail "explain --graph: the page in Chromium (above)"

expect_error "--graph with one token" "the block's graph needs 2 or more" \
  "$tinygpt" explain "${fresh[@]}" --prompt "w" --graph "$work/one.html"
expect_error "--graph --layer 4" "block 4 does not exist: the model has 4 blocks" \
  "$tinygpt" explain "${fresh[@]}" --prompt "we are" --layer 4 --graph "$work/four.html"
expect_error "--graph with --html" "--html excludes --graph" \
  "$tinygpt" explain "${fresh[@]}" --prompt "we are" --html "$work/x.html" --graph "$work/y.html"
expect_error "--graph with --head" "--head excludes --graph" \
  "$tinygpt" explain "${fresh[@]}" --prompt "we are" --head 1 --graph "$work/head.html"
expect_error "--graph with --shared-scale" "--graph excludes --shared-scale" \
  "$tinygpt" explain "${fresh[@]}" --prompt "we are" --shared-scale --graph "$work/scale.html"
[[ -e $work/one.html || -e $work/four.html || -e $work/y.html || -e $work/head.html || -e $work/scale.html ]] && fail "explain --graph: a page written after an error"

finish "explain --graph"
