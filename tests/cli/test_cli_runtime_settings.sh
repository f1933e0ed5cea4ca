#!/usr/bin/env bash
# tinygpt starts itself again with its own thread and BLAS settings
# (tensor/runtime/process_environment.h) unless the user made them, and says which are
# in effect: the OpenMP wait policy, and OpenBLAS's AVX-512 kernels on a CPU
# that has AVX-512 when the library picked (or was told) narrower ones. The
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
  expected_core=SkylakeX
  [[ $flags == *" avx512_bf16 "* ]] && expected_core=Cooperlake
  expect_line "told Haswell on AVX-512" \
    "OpenBLAS kernels $expected_core (chosen by tinygpt over OPENBLAS_CORETYPE=Haswell on this AVX-512 CPU" \
    "$(runtime_line OPENBLAS_CORETYPE=Haswell)"
  expect_line "Haswell kept" "OpenBLAS kernels Haswell (your OPENBLAS_CORETYPE)" \
    "$(runtime_line OPENBLAS_CORETYPE=Haswell TINYGPT_ENVIRONMENT=keep)"
  runtime_line | grep -qE "OpenBLAS kernels (SkylakeX|Cooperlake|SapphireRapids)" ||
    fail "AVX-512 CPU without AVX-512 kernels: $(runtime_line)"
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
