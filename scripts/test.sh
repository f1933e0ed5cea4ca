#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs dependencies, builds the
# Release and the sanitizer (ASan + UBSan) flavours and runs every suite in both,
# then builds the libFuzzer harnesses (clang) and runs each for 20 s from its seeds.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
for flavour in release sanitize; do
  echo "== $flavour: build"
  bash scripts/build.sh "$flavour"
  echo "== $flavour: test"
  # Two suites run at once on two cores: idle OpenMP threads must sleep, not spin
  # (spinning teammates starve each other; see docs/training.md).
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    OMP_WAIT_POLICY=PASSIVE ctest --test-dir "build/$flavour" --output-on-failure -j 2
done
echo "== fuzz: build"
bash scripts/build.sh fuzz
echo "== fuzz: each harness replays its seeds, then fuzzes for 20 s"
bash scripts/fuzz.sh
echo "== all tests passed (release, sanitize and fuzz)"
