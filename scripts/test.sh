#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs dependencies, builds the
# Release and the sanitizer (ASan + UBSan) flavours, and runs every suite in both.
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
echo "== all tests passed (release and sanitize)"
