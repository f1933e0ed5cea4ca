#!/usr/bin/env bash
# tinygpt starts itself again with its own thread and BLAS settings
# (tensor/runtime/process_environment.h) unless the user made them, and says which are
# in effect: the OpenMP wait policy, and OpenBLAS's kernels chosen for the CPU
# where the library picked others (a user's OPENBLAS_CORETYPE kept). The
# line reports the environment the process started with (/proc/self/environ),
# so without the restart it would name libgomp's default.
#
# usage: test_cli_runtime_settings.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

# runtime_line ENV...: the "runtime:" line of --version under exactly these settings.
runtime_line() {
  env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u OPENBLAS_CORETYPE -u TINYGPT_ENVIRONMENT -u TINYGPT_THREADS "$@" "$tinygpt" --version |
    grep "^runtime:"
}
expect_line() {
  local name=$1 expected=$2 line=$3
  grep -qF -- "$expected" <<<"$line" || fail "$name: '$expected' not in: $line"
}

# The thread count follows the load (tensor/runtime/thread_governor.h), on any BLAS
# kernels, so libgomp's own spin stays; a short one only where the user fixed the count.
expect_line "threads follow the load" \
  "idle threads spin 300000 times, then sleep (libgomp's default); one thread fewer while other processes keep a CPU busy" \
  "$(runtime_line)"
expect_line "threads fixed by the user" \
  "idle threads spin 500 times, then sleep (set by tinygpt); thread count fixed (TINYGPT_THREADS=fixed)" \
  "$(runtime_line TINYGPT_THREADS=fixed)"
expect_line "user's wait policy" "idle threads follow your OMP_WAIT_POLICY=PASSIVE" "$(runtime_line OMP_WAIT_POLICY=PASSIVE)"
expect_line "user's spin count" "idle threads spin 7 times, then sleep (your GOMP_SPINCOUNT)" "$(runtime_line GOMP_SPINCOUNT=7)"
expect_line "all kept" "idle threads spin 300000 times, then sleep (libgomp's default)" "$(runtime_line TINYGPT_ENVIRONMENT=keep)"
# OpenBLAS's Haswell kernels kept: the count follows the load there too (the products are cut one way for every count).
expect_line "Haswell kernels kept" \
  "one thread fewer while other processes keep a CPU busy (TINYGPT_THREADS=fixed keeps them all)" \
  "$(runtime_line TINYGPT_ENVIRONMENT=keep OPENBLAS_CORETYPE=Haswell)"

# OpenBLAS's AVX-512 kernels, and tinygpt's, need AVX512 F, BW, VL and DQ.
flags=$(grep -m1 "^flags" /proc/cpuinfo)
if [[ $flags == *" avx512f "* && $flags == *" avx512bw "* && $flags == *" avx512vl "* && $flags == *" avx512dq "* ]]; then
  expect_line "AVX-512 kernels" "tinygpt kernels AVX-512;" "$(runtime_line)"
  expect_line "AVX2 kernels asked for" "tinygpt kernels AVX2 (your TINYGPT_ISA);" "$(runtime_line TINYGPT_ISA=avx2)"
  # tinygpt's choice (tensor/runtime/process_environment.h): Zen's AVX2 kernels on Zen 4 (AMD family 25 with
  # AVX-512), else the widest AVX-512 ones.
  expected_core=SkylakeX
  [[ $flags == *" avx512_bf16 "* ]] && expected_core=Cooperlake
  if grep -q "^vendor_id.*AuthenticAMD" /proc/cpuinfo && [[ $(grep -m1 "^cpu family" /proc/cpuinfo) == *": 25" ]]; then
    expected_core=Zen
  fi
  expect_line "tinygpt's kernels" "OpenBLAS kernels $expected_core (" "$(runtime_line)"
  library_pick=$(runtime_line TINYGPT_ENVIRONMENT=keep | grep -oE "OpenBLAS kernels [A-Za-z0-9]+" | cut -d' ' -f3)
  if [[ $library_pick != "$expected_core" ]]; then
    expect_line "chosen over the library's pick" \
      "OpenBLAS kernels $expected_core (chosen by tinygpt over the library's $library_pick: " "$(runtime_line)"
    expect_line "the library's pick kept, with a note" \
      "OpenBLAS kernels $library_pick (the library's pick; tinygpt would choose $expected_core: " \
      "$(runtime_line TINYGPT_ENVIRONMENT=keep)"
  else
    expect_line "the library's pick" "OpenBLAS kernels $expected_core (the library's pick)" "$(runtime_line)"
  fi
  # A user's OPENBLAS_CORETYPE wins, with a note when tinygpt would choose otherwise.
  expect_line "the user's Haswell kept" \
    "OpenBLAS kernels Haswell (your OPENBLAS_CORETYPE; tinygpt would choose $expected_core: " \
    "$(runtime_line OPENBLAS_CORETYPE=Haswell)"
  expect_line "the user's choice, tinygpt's too" "OpenBLAS kernels $expected_core (your OPENBLAS_CORETYPE)" \
    "$(runtime_line OPENBLAS_CORETYPE=$expected_core)"
  # As on an AVX2-only CPU: tinygpt's AVX2 kernels and OpenBLAS's Haswell ones, both asked for.
  expect_line "as on an AVX2 CPU" \
    "tinygpt kernels AVX2 (your TINYGPT_ISA); OpenBLAS kernels Haswell (your OPENBLAS_CORETYPE;" \
    "$(runtime_line TINYGPT_ISA=avx2 OPENBLAS_CORETYPE=Haswell)"
else
  expect_line "AVX2 kernels" "tinygpt kernels AVX2;" "$(runtime_line)"
  expect_exit "AVX-512 asked for on an AVX2 CPU" 1 "TINYGPT_ISA=avx512, but this CPU lacks AVX-512" \
    env TINYGPT_ISA=avx512 "$tinygpt" --version
  expect_line "AVX2 CPU keeps Haswell" "OpenBLAS kernels Haswell (your OPENBLAS_CORETYPE)" \
    "$(runtime_line OPENBLAS_CORETYPE=Haswell)"
fi

expect_exit "unknown instruction set" 1 "TINYGPT_ISA must be avx2 or avx512, got 'avx3'" \
  env TINYGPT_ISA=avx3 "$tinygpt" --version

# The second start keeps the arguments, the exit codes and standard input.
expect_exit "usage error after the restart" 2 "--tokens must be an integer from 1 to 1000000, got abc" \
  env -u OMP_WAIT_POLICY -u TINYGPT_ENVIRONMENT "$tinygpt" sample --tokens abc
if [[ -f ../shared/data/gpt2/encoder.json ]]; then
  printf 'hello world' | env -u OMP_WAIT_POLICY -u TINYGPT_ENVIRONMENT "$tinygpt" tokenize --vocab ../shared/data/gpt2 \
    >"$work/tokens" 2>&1 || fail "tokenize from standard input after the restart: $(cat "$work/tokens")"
  [[ $(cat "$work/tokens") == "31373 995" ]] || fail "tokenize from standard input: $(cat "$work/tokens")"
fi

finish "runtime settings"
