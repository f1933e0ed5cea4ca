#!/usr/bin/env bash
# tinygpt as a library: installs the build into a scratch prefix, builds
# examples/ against it as a separate project (find_package(tinygpt),
# tinygpt::tinygpt, headers as <tinygpt/...>), trains a tiny model with one
# example and reads its next-token distribution with the other. Also checks
# that a library-only configuration needs neither CLI11 nor doctest.
#
# usage: test_examples.sh BUILD_DIR   (CTest passes the release build's directory)
set -uo pipefail

build_dir=${1:?usage: $0 BUILD_DIR}
tinygpt=/dev/null
source "$(dirname "$0")/../cli/cli_test_helpers.sh"

cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" 2>&1 || fail "cmake --install: $(tail -5 "$work/install.log")"
[[ -f $work/prefix/include/tinygpt/models/gpt.h ]] || fail "install: no include/tinygpt/models/gpt.h"
[[ -f $work/prefix/lib/cmake/tinygpt/tinygptConfig.cmake ]] || fail "install: no CMake package"
[[ -x $work/prefix/bin/tinygpt ]] || fail "install: no bin/tinygpt"
! find "$work/prefix/include" -name '*.cpp' | grep -q . || fail "install: sources among the headers"

cmake -S examples -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  >"$work/configure.log" 2>&1 || fail "configure examples/: $(tail -20 "$work/configure.log")"
cmake --build "$work/examples" >"$work/build.log" 2>&1 || fail "build examples/: $(tail -30 "$work/build.log")"

for _ in $(seq 40); do echo "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer"; done >"$work/corpus.txt"
"$work/examples/train_tiny" "$work/corpus.txt" "$work/run" >"$work/out" 2>"$work/err" || fail "train_tiny: $(cat "$work/err")"
grep -q "^trained 60 steps, best val loss " "$work/out" || fail "train_tiny: $(cat "$work/out")"
"$work/examples/next_token" "$work/run/best.safetensors" "To be, or not to b" >"$work/out" 2>"$work/err" \
  || fail "next_token: $(cat "$work/err")"
[[ $(grep -c "%  id " "$work/out") -eq 5 ]] || fail "next_token: expected 5 lines: $(cat "$work/out")"
# 60 steps on one repeated line learn it: after "to b" comes "e".
head -1 "$work/out" | grep -q " 'e'$" || fail "next_token: the likeliest token after 'to b' is not 'e': $(cat "$work/out")"
# A newline token is shown as '\n' and keeps the table at 5 lines (printed raw, it broke a line in two).
for _ in $(seq 200); do echo "abcdef"; done >"$work/lines.txt"
"$work/examples/train_tiny" "$work/lines.txt" "$work/lines" >/dev/null 2>"$work/err" || fail "train_tiny: $(cat "$work/err")"
"$work/examples/next_token" "$work/lines/best.safetensors" "abcdef" >"$work/out" 2>"$work/err" \
  || fail "next_token: $(cat "$work/err")"
[[ $(wc -l <"$work/out") -eq 5 ]] && head -1 "$work/out" | grep -qF "'\n'" \
  || fail "next_token: after 'abcdef' the likeliest token is not shown as '\\n' in a 5-line table: $(cat "$work/out")"
"$work/examples/next_token" "$work/run/missing.safetensors" "x" >/dev/null 2>"$work/err"
[[ $? -eq 1 ]] && grep -q "missing.safetensors" "$work/err" || fail "next_token on a missing file: $(cat "$work/err")"

# A project that only links the library configures without CLI11 and doctest.
cmake -S . -B "$work/library-only" -G Ninja -DTINYGPT_CLI=OFF -DTINYGPT_TESTS=OFF -DTINYGPT_BENCH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  >"$work/library-only.log" 2>&1 || fail "a library-only configuration failed: $(tail -20 "$work/library-only.log")"

finish "install and examples"
