# Shared by the CLI test scripts (source it after setting `tinygpt`):
# a scratch folder removed on exit, a failure counter, expect_error,
# expect_exit and the closing summary.

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

# finish WHAT: the summary line and the exit code.
finish() {
  if [[ $failures -gt 0 ]]; then
    echo "$failures check(s) failed" >&2
    exit 1
  fi
  echo "all $1 checks passed"
}
