#!/usr/bin/env bash
# tinygpt serve end to end on the Llama fixture (tests/fixtures/hf_llama/llama: a
# tokenizer.json, a chat template, a context of 128): OpenAI's Node client for
# completions and chat, whole and streamed; greedy text over HTTP equal to
# tinygpt sample --greedy; clients that leave a stream (their replies cancelled);
# a full queue (503); hostile clients, each refused with its status, the server
# serving on; 32 clients at once without a failure; SIGTERM with streams under
# way; the API key; the warning for another host than the loopback; the usage errors.
#
# usage: test_cli_serve.sh path/to/tinygpt   (CTest passes the built binary)
# Needs node with the openai npm package in build/npm (bash scripts/setup.sh --test) and python3.
set -u
tinygpt=$1
source "$(dirname "$0")/cli_test_helpers.sh"
scripts=$(dirname "$0")/serve
model=tests/fixtures/hf_llama/llama
context=128
io_timeout=2

if [[ ! -f build/npm/node_modules/openai/package.json ]]; then
  echo "FAIL: build/npm/node_modules/openai is missing: run bash scripts/setup.sh --test" >&2
  exit 1
fi

server_pid=""
port=""
model_flags=(--weights "$model")
# start_server NAME [FLAGS...]: tinygpt serve with model_flags' model on a free port (--port 0, read back
# from the startup line); sets server_pid and port.
start_server() {
  local name=$1
  shift
  "$tinygpt" serve "${model_flags[@]}" --port 0 --io-timeout "$io_timeout" "$@" 2>"$work/$name.log" &
  server_pid=$!
  port=""
  for _ in $(seq 1 300); do
    port=$(grep -o 'listening on http://[^ ]*:[0-9]*/' "$work/$name.log" 2>/dev/null | grep -o '[0-9]*/$' | tr -d /)
    [[ -n $port ]] && return 0
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  fail "$name: the server did not start: $(cat "$work/$name.log")"
  return 1
}
# stop_server NAME: SIGTERM, and the server must exit 0 within 8 seconds.
stop_server() {
  local name=$1 began=$SECONDS status
  kill -TERM "$server_pid"
  for _ in $(seq 1 80); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$server_pid" 2>/dev/null; then
    fail "$name: still running 8 s after SIGTERM"
    kill -KILL "$server_pid"
  fi
  wait "$server_pid"
  status=$?
  [[ $status -eq 0 ]] || fail "$name: exit code $status after SIGTERM: $(tail -3 "$work/$name.log")"
  echo "$name: stopped in $((SECONDS - began)) s"
}
trap '[[ -n $server_pid ]] && kill -KILL "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT

# ---- OpenAI's client ----
if start_server api; then
  grep -q 'as "llama"' "$work/api.log" || fail "startup line lacks the model's name: $(cat "$work/api.log")"
  [[ $(wc -l <"$work/api.log") -eq 1 ]] || fail "startup: expected one line on stderr: $(cat "$work/api.log")"
  node "$scripts/openai_client.mjs" "http://127.0.0.1:$port" llama api 2>"$work/client.err" \
    || fail "openai client: $(cat "$work/client.err")"
  page=$(curl -s -D "$work/page.headers" "http://127.0.0.1:$port/")
  grep -qi '^content-type: text/html' "$work/page.headers" || fail "GET /: not text/html: $(cat "$work/page.headers")"
  [[ -n $page ]] || fail "GET /: an empty page"
  stop_server api
fi

# ---- greedy text over HTTP equal to tinygpt sample's, on a char-level model (whose text is always
# whole UTF-8 characters: the fixture's random weights make bytes a JSON answer would replace) ----
for _ in $(seq 300); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
# A context of 1024: replies long enough to outlast a client that leaves.
if "$tinygpt" train --data "$work/corpus.txt" --layers 1 --heads 2 --dims 16 --block-size 1024 --batch-size 1 --iters 2 \
     --eval-interval 3 --eval-iters 2 --seed 5 --out "$work/char" >/dev/null 2>"$work/train.log"; then
  model_flags=(--ckpt "$work/char")
  if start_server char; then
    grep -q 'as "char"' "$work/char.log" || fail "char: startup line lacks the run's name: $(cat "$work/char.log")"
    for prompt in First "we are"; do
      "$tinygpt" sample --ckpt "$work/char" -p "$prompt" -n 20 --greedy >"$work/sample.txt" 2>/dev/null || fail "sample failed"
      body=$(python3 -c 'import json,sys; print(json.dumps({"prompt": sys.argv[1], "max_tokens": 20, "temperature": 0}))' "$prompt")
      curl -s "http://127.0.0.1:$port/v1/completions" -H 'Content-Type: application/json' -d "$body" >"$work/greedy.json"
      python3 -c 'import json,sys; sys.stdout.write(sys.argv[1] + json.load(open(sys.argv[2]))["choices"][0]["text"])' \
        "$prompt" "$work/greedy.json" >"$work/http.txt" || fail "greedy over HTTP: $(cat "$work/greedy.json")"
      cmp -s "$work/sample.txt" "$work/http.txt" \
        || fail "greedy over HTTP differs from tinygpt sample: '$(cat "$work/http.txt")' vs '$(cat "$work/sample.txt")'"
    done
    # Clients that leave a stream: their replies cancelled (said on stderr), the server serving on.
    python3 "$scripts/hostile_clients.py" "$port" char 1024 "$io_timeout" gone 2>"$work/gone.err" \
      || fail "clients that leave: $(cat "$work/gone.err")"
    [[ $(grep -c 'stopped taking its stream' "$work/char.log") -eq 3 ]] \
      || fail "clients that leave: expected 3 cancelled replies on stderr: $(cat "$work/char.log")"
    stop_server char
  fi
  if start_server busy --max-sequences 1 --max-queued 1; then
    python3 "$scripts/hostile_clients.py" "$port" char 1024 "$io_timeout" busy 2>"$work/busy.err" \
      || fail "a full queue: $(cat "$work/busy.err")"
    stop_server busy
  fi
  model_flags=(--weights "$model")
else
  fail "train a char-level model: $(cat "$work/train.log")"
fi

# ---- hostile clients, then a crowd ----
if start_server hostile --max-tokens 100; then
  python3 "$scripts/hostile_clients.py" "$port" llama "$context" "$io_timeout" hostile 2>"$work/hostile.err" \
    || fail "hostile clients: $(cat "$work/hostile.err")"
  python3 "$scripts/hostile_clients.py" "$port" llama "$context" "$io_timeout" crowd 2>"$work/crowd.err" \
    || fail "32 clients x 10 requests: $(head -20 "$work/crowd.err")"
  stop_server hostile
fi

# ---- SIGTERM while streams are under way: exit 0 within a few seconds ----
if start_server sigterm --max-sequences 2; then
  python3 "$scripts/hostile_clients.py" "$port" llama "$context" "$io_timeout" streams 6 >"$work/streams.out" 2>&1 &
  streams_pid=$!
  for _ in $(seq 1 100); do
    grep -q streaming "$work/streams.out" && break
    sleep 0.1
  done
  grep -q streaming "$work/streams.out" || fail "SIGTERM: the streams did not start: $(cat "$work/streams.out")"
  stop_server sigterm
  grep -q 'stopped by SIGTERM' "$work/sigterm.log" || fail "SIGTERM: no closing line: $(cat "$work/sigterm.log")"
  kill "$streams_pid" 2>/dev/null
  wait "$streams_pid" 2>/dev/null
fi

# ---- the API key, from the environment; /health stays open ----
export TINYGPT_API_KEY=s3cret-key
if start_server key; then
  node "$scripts/openai_client.mjs" "http://127.0.0.1:$port" llama key "$TINYGPT_API_KEY" 2>"$work/key.err" \
    || fail "API key: $(cat "$work/key.err")"
  python3 "$scripts/hostile_clients.py" "$port" llama "$context" "$io_timeout" key "$TINYGPT_API_KEY" 2>"$work/key2.err" \
    || fail "API key on one connection: $(cat "$work/key2.err")"
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/v1/models")
  [[ $status == 401 ]] || fail "no key: status $status, expected 401"
  status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/health")
  [[ $status == 200 ]] || fail "/health without the key: status $status, expected 200"
  stop_server key
fi
unset TINYGPT_API_KEY

# ---- a port already taken: refused (httplib's own default, SO_REUSEPORT, would share it silently) ----
if start_server first; then
  expect_exit "port in use" 1 "serve: cannot listen on 127.0.0.1:$port: the port is in use" \
    "$tinygpt" serve "${model_flags[@]}" --port "$port"
  stop_server first
fi

# ---- elsewhere than the loopback without a key: a warning ----
if start_server open --host 0.0.0.0; then
  grep -q 'warning: listening on 0.0.0.0 without an API key' "$work/open.log" \
    || fail "no warning for 0.0.0.0 without a key: $(cat "$work/open.log")"
  stop_server open
fi

# ---- usage errors ----
expect_exit "no model" 2 "serve: " "$tinygpt" serve --port 0
expect_exit "port out of range" 2 "--port must be" "$tinygpt" serve --weights "$model" --port 70000
expect_exit "max-tokens past the context" 2 "--max-tokens 500 is more than the model's context of 128" \
  "$tinygpt" serve --weights "$model" --port 0 --max-tokens 500
expect_exit "zero sequences" 2 "--max-sequences must be" "$tinygpt" serve --weights "$model" --max-sequences 0
expect_exit "no KV memory" 2 "--max-kv-mib must be" "$tinygpt" serve --weights "$model" --max-kv-mib 0

finish serve
