#!/usr/bin/env bash
# tinygpt serve under load: starts `tinygpt serve` on a model, runs
# bench/serve_load.mjs against it (for each number of clients, that many at once
# each sending REQUESTS streamed completions of mixed prompt lengths and
# max_tokens) and stops the server. Prints the CPU and one table: per level the
# requests, failures, p50/p99 time to first token and time per output token, the
# output tokens/s of all clients together and its ratio to one client's.
#
# usage: bash bench/run_serve_load.sh [--check]
#   --check: exit non-zero if any request failed (the CLI test runs it so, on a tiny model).
#   Settings from the environment: MODEL (serve's model flags, e.g. "--weights DIR"; by default a
#   fresh checkpoint of the preset CONFIG, gpt2 (124M) unless set, whose speed does not depend on its
#   random weights, made with `train --iters 0` on CORPUS, ../shared/data/tinyshakespeare.txt), CLIENTS (1,2,4,8,16,32),
#   REQUESTS (10 per client), PROMPT_WORDS (8,64,256), MAX_TOKENS (16,64,128), ENDPOINT
#   (completions; chat needs a model with a chat template), SERVE_FLAGS (more flags for serve),
#   TINYGPT (the program; default: built in build/release, or from BENCH_BUILD_DIR).
# Node 18+ (its own fetch) runs the clients.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/bench_program.sh
check=()
case ${1:-} in
  --check) check=(--check) ;;
  "") ;;
  *) echo "usage: bash bench/run_serve_load.sh [--check]" >&2; exit 2 ;;
esac
tinygpt=${TINYGPT:-$(bench_tinygpt)}
read -r -a serve_flags <<<"${SERVE_FLAGS:-}"
work=$(mktemp -d)
server=""
stop_server() {
  if [[ -n $server ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap stop_server EXIT

if [[ -n ${MODEL:-} ]]; then
  read -r -a model_flags <<<"$MODEL"
else
  corpus=${CORPUS:-../shared/data/tinyshakespeare.txt}
  [[ -f $corpus ]] || { echo "run_serve_load.sh: no corpus at $corpus (set CORPUS, or MODEL)" >&2; exit 1; }
  config=${CONFIG:-gpt2}
  tokenizer_flags=()
  [[ $config == gpt2* ]] && tokenizer_flags=(--tokenizer gpt2)  # the char-level presets take their vocabulary from the corpus
  "$tinygpt" train --config "$config" "${tokenizer_flags[@]}" --data "$corpus" --iters 0 --batch-size 1 --eval-iters 1 \
    --out "$work/model" >"$work/model.log" 2>&1 \
    || { echo "run_serve_load.sh: making the $config checkpoint failed: $(tail -3 "$work/model.log")" >&2; exit 1; }
  model_flags=(--ckpt "$work/model")
fi

# Port 0: the server takes a free port and prints it ("listening on http://127.0.0.1:PORT/").
"$tinygpt" serve "${model_flags[@]}" --port 0 "${serve_flags[@]}" >"$work/serve.log" 2>&1 &
server=$!
url=""
until [[ -n $url ]] && curl -sf "$url/health" >/dev/null; do
  if ! kill -0 "$server" 2>/dev/null; then
    echo "run_serve_load.sh: tinygpt serve ended before it answered: $(tail -5 "$work/serve.log")" >&2
    server=""
    exit 1
  fi
  sleep 0.2
  url=$(grep -om1 'listening on http://[^/]*' "$work/serve.log" | sed 's/^listening on //' || true)
done

grep -m1 '^serve: ' "$work/serve.log"  # what is served: the model, its context, sequences at once
status=0
node bench/serve_load.mjs --url "$url" --clients "${CLIENTS:-1,2,4,8,16,32}" \
  --requests "${REQUESTS:-10}" --prompt-words "${PROMPT_WORDS:-8,64,256}" --max-tokens "${MAX_TOKENS:-16,64,128}" \
  --endpoint "${ENDPOINT:-completions}" "${check[@]}" || status=$?
if ((status != 0)); then
  echo "run_serve_load.sh: the server's last lines: $(tail -5 "$work/serve.log")" >&2
fi
exit "$status"
