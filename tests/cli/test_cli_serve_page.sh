#!/usr/bin/env bash
# tinygpt serve's chat page, in headless Chromium (tests/cli/serve/chat_page_test.mjs,
# driven by puppeteer-core from build/npm): GET / is serve/chat_page.html byte for
# byte; the page asks nothing of another origin and has no script error; two turns
# typed and sent with Enter stream in and equal what the same conversation gets
# without streaming (greedy); each reply's figures; Stop; a new conversation; a wrong
# API key's error and a too large max_tokens' shown as text; nothing overlaps or
# overflows at 360 and 1400 px (screenshots in the scratch folder). The model: a
# char-level one trained on a few conversations in a second (ChatML; readable
# replies, whole characters, room for every turn in its 256 positions). Then 32
# clients x 10 streamed requests at once on the Llama fixture
# (bench/run_serve_load.sh --check): none fails.
#
# usage: test_cli_serve_page.sh path/to/tinygpt   (CTest passes the built binary)
# Needs Debian's chromium, Node.js and puppeteer-core (bash scripts/setup.sh --test).
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

require_chromium

# The page is pasted into a C++ raw string by configure_file(@ONLY): a @NAME@ would be replaced,
# and the raw string's closing delimiter would end it early.
page=serve/chat_page.html
grep -nE '@[A-Za-z_0-9/.+-]+@' "$page" && fail "$page holds a @NAME@ that configure_file would replace"
grep -nF ')tinygpt_page"' "$page" && fail "$page holds the raw string's closing delimiter"

# Conversations with the page's turns, learnt by heart: each reply is then a sentence.
while IFS='|' read -r question answer; do
  for system in '' '{"role": "system", "content": "Be brief."}, '; do
    echo "{\"messages\": [$system{\"role\": \"user\", \"content\": \"$question\"}, {\"role\": \"assistant\", \"content\": \"$answer\"}]}"
  done
done >"$work/chats.jsonl" <<'EOF'
Hello there|Hello! How can I help you today?
Tell me\nmore|There is not much more to tell: I am a small model.
And then?|Then we talk some more.
Hi again|Hi! What would you like to talk about?
Go on|I was trained in a second, on a few lines.
Thanks|You are welcome.
EOF
"$tinygpt" train --data "$work/chats.jsonl" --layers 2 --heads 2 --dims 64 --block-size 256 --batch-size 4 --iters 400 \
  --lr 3e-3 --eval-interval 400 --eval-iters 1 --seed 5 --out "$work/chat" >/dev/null 2>"$work/train.log" \
  || fail "train on conversations: $(cat "$work/train.log")"

api_key=test-key-$RANDOM
start_server "$work/serve.log" --ckpt "$work/chat" --api-key "$api_key"
if [[ -z $url ]]; then
  fail "serve: no answer on /health: $(tail -5 "$work/serve.log")"
else
  curl -sf "$url/" >"$work/served.html" || fail "serve: GET / failed"
  cmp -s "$work/served.html" "$page" || fail "serve: GET / is not $page as it is"
  node tests/cli/serve/chat_page_test.mjs "$url" "$api_key" "$work" || fail "the chat page (above)"
  for width in 360 1400; do
    [[ -s $work/chat-$width.png ]] || fail "no screenshot at $width px"
  done
fi
kill $server 2>/dev/null
wait $server 2>/dev/null

# Many clients at once on the same fixture: every request answered.
TINYGPT=$tinygpt MODEL="--weights tests/fixtures/hf_llama/llama" CLIENTS=32 REQUESTS=10 PROMPT_WORDS=1,3,6 MAX_TOKENS=2,5,9 \
  bash bench/run_serve_load.sh --check >"$work/load.log" 2>&1 || fail "32 clients x 10 requests: $(cat "$work/load.log")"

finish "serve's chat page and load"
