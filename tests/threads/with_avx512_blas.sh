#!/usr/bin/env bash
# Runs a test program with OpenBLAS's AVX-512 kernels (Cooperlake where the CPU
# has AVX512-BF16, else SkylakeX), the ones whose products come out the same on
# any number of threads (tensor/runtime/threads.h), whatever OPENBLAS_CORETYPE the
# machine sets; on a CPU without AVX-512 there is nothing to run, and it says so.
#   tests/threads/with_avx512_blas.sh PROGRAM [ARGS...]
set -euo pipefail
flags=$(grep -m1 '^flags' /proc/cpuinfo)
if [[ $flags != *" avx512f "* ]]; then
  echo "with_avx512_blas: this CPU has no AVX-512; the thread-count checks need OpenBLAS's AVX-512 kernels"
  exit 0
fi
[[ $flags == *" avx512_bf16 "* ]] && core=Cooperlake || core=SkylakeX
OPENBLAS_CORETYPE=$core exec "$@"
