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
#   Settings from the environment: MODEL (serve's model flags, default "--config gpt2": a fresh
#   GPT-2 124M, whose speed does not depend on its random weights), CLIENTS (1,2,4,8,16,32),
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
read -r -a model_flags <<<"${MODEL:---config gpt2}"
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

# A port free now (the kernel's choice); the server takes it a moment later.
port=$(node -e 'const s = require("net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
"$tinygpt" serve "${model_flags[@]}" --port "$port" "${serve_flags[@]}" >"$work/serve.log" 2>&1 &
server=$!
until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
  if ! kill -0 "$server" 2>/dev/null; then
    echo "run_serve_load.sh: tinygpt serve ended before it answered: $(tail -5 "$work/serve.log")" >&2
    server=""
    exit 1
  fi
  sleep 0.2
done

status=0
node bench/serve_load.mjs --url "http://127.0.0.1:$port" --clients "${CLIENTS:-1,2,4,8,16,32}" \
  --requests "${REQUESTS:-10}" --prompt-words "${PROMPT_WORDS:-8,64,256}" --max-tokens "${MAX_TOKENS:-16,64,128}" \
  --endpoint "${ENDPOINT:-completions}" "${check[@]}" || status=$?
if ((status != 0)); then
  echo "run_serve_load.sh: the server's last lines: $(tail -5 "$work/serve.log")" >&2
fi
exit "$status"
