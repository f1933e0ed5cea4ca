# Shared by the CLI test scripts (source it after setting `tinygpt`):
# a scratch folder removed on exit, a failure counter, expect_error,
# expect_exit, start_server (tinygpt serve on a free port) and the closing summary.

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# expect_error NAME EXPECTED_TEXT COMMAND...: non-zero exit, one stderr line containing the text, no stdout.
expect_error() {
  local name=$1 expected=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local status=$?
  [[ $status -ne 0 ]] || fail "$name: exit code 0, expected non-zero"
  [[ $(wc -l <"$work/err") -eq 1 ]] || fail "$name: expected one line on stderr, got: $(cat "$work/err")"
  grep -qF -- "$expected" "$work/err" || fail "$name: stderr lacks '$expected': $(cat "$work/err")"
  [[ ! -s $work/out ]] || fail "$name: unexpected stdout: $(head -c 300 "$work/out")"
}

# expect_exit NAME CODE EXPECTED_TEXT COMMAND...: expect_error, and exactly this exit code.
expect_exit() {
  local name=$1 code=$2 expected=$3
  shift 3
  expect_error "$name" "$expected" "$@"
  "$@" >/dev/null 2>&1
  local status=$?
  [[ $status -eq $code ]] || fail "$name: exit code $status, expected $code"
}

# require_chromium: Debian's chromium and npm's puppeteer-core in build/npm (scripts/setup.sh --test), else a
# failure and exit: a browser test must not pass by not running.
require_chromium() {
  command -v chromium >/dev/null || { echo "FAIL: chromium is not installed: run bash scripts/setup.sh --test" >&2; exit 1; }
  [[ -f build/npm/node_modules/puppeteer-core/package.json ]] \
    || { echo "FAIL: build/npm/node_modules/puppeteer-core is missing: run bash scripts/setup.sh --test" >&2; exit 1; }
}

# start_server LOG SERVE_FLAGS...: `tinygpt serve SERVE_FLAGS --port 0` in the background, its output
# in LOG, stopped on exit. Sets `server` (its pid) and, once /health answers, `url`
# (http://127.0.0.1:PORT, the port the server took and printed); `url` stays empty if it never does.
start_server() {
  local log=$1
  shift
  "$tinygpt" serve "$@" --port 0 >"$log" 2>&1 &
  server=$!
  trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
  url=""
  for _ in $(seq 300); do
    url=$(grep -om1 'listening on http://[^/]*' "$log" | sed 's/^listening on //')
    [[ -n $url ]] && curl -sf "$url/health" >/dev/null && return
    kill -0 $server 2>/dev/null || break
    sleep 0.2
  done
  url=""
}

# finish WHAT: the summary line and the exit code.
finish() {
  if [[ $failures -gt 0 ]]; then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "all $1 checks passed"
}
