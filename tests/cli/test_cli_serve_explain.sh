#!/usr/bin/env bash
# tinygpt serve's live step-through: GET /explain is serve/explain_page.html byte for byte;
# POST /v1/explain refuses a wrong key (401), a body that is not JSON, an empty prompt, a
# block out of range, a top_k out of 1..20 and a prompt beyond the context (400, naming the
# field); then the page in headless Chromium (tests/cli/serve/explain_page_test.mjs, driven
# by puppeteer-core from build/npm): a typed prompt's attention (scores, mask, weights of every
# head) equal to what `tinygpt explain` prints, an edit redrawn, a prompt as long as the context
# drawn whole, the tooltip's exact value, the pin, the loss and gradients of a target equal to
# the terminal's, errors shown as the server's words, compare mode (prompt B's heatmaps equal to
# the terminal's, B - A, both values on hover, the differing tokens, both predictions, B's loss and
# "why this token" equal to the terminal's, a pin from B's tokens moving both attributions), fields
# from the address, nothing overlapping at 360 and 1400 px (screenshots in the scratch folder).
# Then `tinygpt explain --serve`: the page's address printed with the prompt in it, /explain and
# /v1/explain served for the model, exit 0 on SIGTERM; --serve with --html is a usage error.
# The model: char-level, 2 blocks of 2 heads, a 256-token context, trained for a few seconds on
# tiny Shakespeare.
#
# usage: test_cli_serve_explain.sh path/to/tinygpt   (CTest passes the built binary)
# Needs Debian's chromium, Node.js and puppeteer-core (bash scripts/setup.sh --test).
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

require_chromium
corpus=../shared/data/tinyshakespeare.txt
[[ -f $corpus ]] || { echo "skipped: $corpus is missing (scripts/data.sh)" >&2; exit 77; }

# The page is pasted into a C++ raw string by configure_file(@ONLY): a @NAME@ would be replaced,
# and the raw string's closing delimiter would end it early.
page=serve/explain_page.html
grep -nE '@[A-Za-z_0-9/.+-]+@' "$page" && fail "$page holds a @NAME@ that configure_file would replace"
grep -nF ')tinygpt_page"' "$page" && fail "$page holds the raw string's closing delimiter"

block_size=256  # the issue asks for a 256-token prompt, every position shown
"$tinygpt" train --data "$corpus" --layers 2 --heads 2 --dims 64 --block-size $block_size --iters 150 \
  --eval-interval 150 --eval-iters 2 --seed 1 --out "$work/model" >/dev/null 2>"$work/train.log" \
  || fail "train on tiny Shakespeare: $(cat "$work/train.log")"

api_key=test-key-$RANDOM
start_server "$work/serve.log" --ckpt "$work/model" --api-key "$api_key"

# post KEY BODY: POST /v1/explain; the reply in $work/reply.json, the status on stdout.
post() {
  curl -s -o "$work/reply.json" -w '%{http_code}' -X POST "$url/v1/explain" -H "Authorization: Bearer $1" \
    -H 'Content-Type: application/json' --data-binary "$2"
}

# expect_refusal NAME STATUS WORD KEY BODY: that status, OpenAI's error shape, its message naming WORD.
expect_refusal() {
  local name=$1 status=$2 word=$3 key=$4 body=$5 code message
  code=$(post "$key" "$body")
  [[ $code == "$status" ]] || fail "$name: HTTP $code, expected $status: $(head -c 300 "$work/reply.json")"
  message=$(node -e 'const reply = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
                     if (!reply.error || typeof reply.error.message !== "string") process.exit(1);
                     console.log(reply.error.message)' "$work/reply.json" 2>/dev/null) \
    || { fail "$name: not OpenAI's error shape: $(head -c 300 "$work/reply.json")"; return; }
  grep -qiF -- "$word" <<<"$message" || fail "$name: the message does not name '$word': $message"
}

if [[ -z $url ]]; then
  fail "serve: no answer on /health: $(tail -5 "$work/serve.log")"
else
  curl -sf "$url/explain" >"$work/served.html" || fail "serve: GET /explain failed"
  cmp -s "$work/served.html" "$page" || fail "serve: GET /explain is not $page as it is"

  code=$(post "$api_key" '{"prompt": "To be"}')
  [[ $code == 200 ]] && grep -qF '"object":"explain"' "$work/reply.json" \
    || fail "POST /v1/explain: HTTP $code: $(head -c 300 "$work/reply.json")"
  expect_refusal "a wrong key" 401 "key" wrong-key '{"prompt": "To be"}'
  expect_refusal "no key" 401 "key" "" '{"prompt": "To be"}'
  expect_refusal "a body that is not JSON" 400 "JSON" "$api_key" '{"prompt": "To be"'
  expect_refusal "an empty prompt" 400 "prompt" "$api_key" '{"prompt": ""}'
  expect_refusal "no prompt" 400 "prompt" "$api_key" '{"layer": 0}'
  expect_refusal "a block out of range" 400 "layer" "$api_key" '{"prompt": "To be", "layer": 2}'
  expect_refusal "a negative block" 400 "layer" "$api_key" '{"prompt": "To be", "layer": -1}'
  expect_refusal "a head out of range" 400 "head" "$api_key" '{"prompt": "To be", "head": 2}'
  expect_refusal "top_k 0" 400 "top_k" "$api_key" '{"prompt": "To be", "top_k": 0}'
  long=$(head -c $((block_size + 1)) /dev/zero | tr '\0' 'a')
  expect_refusal "a prompt beyond the context" 400 "context" "$api_key" "{\"prompt\": \"$long\"}"
  expect_refusal "a prompt and target beyond the context" 400 "context" "$api_key" \
    "{\"prompt\": \"${long:1:$((block_size - 2))}\", \"target\": \"abc\"}"

  node tests/cli/serve/explain_page_test.mjs "$url" "$api_key" "$tinygpt" "[\"--ckpt\", \"$work/model\"]" "$work" \
    || fail "the step-through page (above)"
  for width in 360 1400; do
    [[ -s $work/explain-$width.png && -s $work/explain-compare-$width.png ]] || fail "no screenshots at $width px"
  done
fi
kill $server 2>/dev/null
wait $server 2>/dev/null

# tinygpt explain --serve: the same server on explain's model flags; stdout is the page's address.
"$tinygpt" explain --serve --port 0 --ckpt "$work/model" --prompt "To be?" --target " or" --layer 1 \
  >"$work/explain-serve.out" 2>"$work/explain-serve.log" &
explain_server=$!
page_url=""
for _ in $(seq 150); do
  page_url=$(head -1 "$work/explain-serve.out")
  [[ -n $page_url ]] && break
  kill -0 $explain_server 2>/dev/null || break
  sleep 0.2
done
base=${page_url%%/explain*}
if [[ ! $page_url =~ ^http://127\.0\.0\.1:[0-9]+/explain\?prompt=To%20be%3F\&target=%20or\&layer=1$ ]]; then
  fail "explain --serve printed '$page_url', not the page's address with its fields: $(tail -3 "$work/explain-serve.log")"
else
  curl -sf "$page_url" >"$work/served-explain.html" && cmp -s "$work/served-explain.html" "$page" \
    || fail "explain --serve: GET $page_url is not $page"
  code=$(curl -s -o "$work/reply.json" -w '%{http_code}' -X POST "$base/v1/explain" -H 'Content-Type: application/json' \
    --data-binary '{"prompt": "To be", "layer": 1}')
  [[ $code == 200 ]] && grep -qF '"object":"explain"' "$work/reply.json" && grep -qF '"model":"model"' "$work/reply.json" \
    || fail "explain --serve: POST /v1/explain: HTTP $code: $(head -c 300 "$work/reply.json")"
fi
kill -TERM $explain_server 2>/dev/null
wait $explain_server
status=$?
[[ $status == 0 ]] || fail "explain --serve: exit code $status on SIGTERM, expected 0: $(tail -3 "$work/explain-serve.log")"

expect_exit "explain --serve --html" 2 "explain: --html cannot go with --serve" \
  "$tinygpt" explain --serve --html "$work/walk.html" --ckpt "$work/model" --prompt "To be"
[[ ! -e $work/walk.html ]] || fail "explain --serve --html wrote $work/walk.html"
expect_exit "explain --port without --serve" 2 "explain: --port requires --serve" \
  "$tinygpt" explain --port 0 --ckpt "$work/model" --prompt "To be"

finish "serve's step-through page"
