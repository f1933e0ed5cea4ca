#!/usr/bin/env bash
# Configures and builds one flavour of tinygpt into build/<flavour>:
#   bash scripts/build.sh release     # -O3, AVX2 + FMA with AVX-512 kernels chosen at run time, with benchmarks
#   bash scripts/build.sh sanitize    # AddressSanitizer + UndefinedBehaviorSanitizer, tests only
#   bash scripts/build.sh fuzz        # clang, libFuzzer + ASan + UBSan: the harnesses of tests/fuzz/ only
# Extra arguments are passed to `cmake --build` (e.g. --target tinygpt_cli).
set -euo pipefail
cd "$(dirname "$0")/.."
flavour="${1:-release}"
shift || true
case "$flavour" in
  release)  options=(-DCMAKE_BUILD_TYPE=Release) ;;
  sanitize) options=(-DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g" -DTINYGPT_SANITIZE=ON -DTINYGPT_BENCH=OFF) ;;
  # -O2 for executions per second; Debug keeps assert() on. No MPI: a harness is one process.
  fuzz)     options=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-O2 -g"
                     -DTINYGPT_SANITIZE=ON -DTINYGPT_FUZZ=ON -DTINYGPT_MPI=OFF -DTINYGPT_BENCH=OFF) ;;
  *) echo "build: unknown flavour '$flavour' (release, sanitize or fuzz)" >&2; exit 2 ;;
esac
cmake -S . -B "build/$flavour" -G Ninja "${options[@]}" >/dev/null
cmake --build "build/$flavour" -j "$(nproc)" "$@"
