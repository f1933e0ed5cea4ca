#!/usr/bin/env bash
# Installs everything tinygpt needs from the distribution's packages (Debian/Ubuntu).
# Safe to run twice: packages already present are not touched, and apt is not
# called at all when nothing is missing.
#
#   bash scripts/setup.sh              # build and benchmark dependencies (what scripts/run.sh needs)
#   bash scripts/setup.sh --test       # also headless Chromium, for the test of explain's web page,
#                                      # and clang with libFuzzer, for the fuzz harnesses (tests/fuzz/)
#   bash scripts/setup.sh --reference  # also what --test adds, PyTorch + numpy (fixture scripts, benchmarks
#                                      # against PyTorch) and Node.js/npm (tiktoken reference ids)
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config
  libopenblas-openmp-dev   # BLAS, OpenMP build: shares one thread pool with our kernels
  doctest-dev              # tests
  libbenchmark-dev         # microbenchmarks
  nlohmann-json3-dev       # JSON (checkpoint headers, encoder.json, metrics)
  libcli11-dev             # the command line
  libutf8proc-dev          # Unicode categories for GPT-2's pre-tokenisation
  libxxhash-dev            # XXH3-64, the checksum of prepared datasets' token files (tinygpt prepare)
  libopenmpi-dev openmpi-bin  # Open MPI: data-parallel training, mpirun -np N tinygpt train (distributed/)
  python3 curl ca-certificates
)
case "${1:-}" in
  "" | --test | --reference) ;;
  *) echo "setup: unknown option '$1' (--test or --reference)" >&2; exit 2 ;;
esac
if [[ "${1:-}" == "--test" || "${1:-}" == "--reference" ]]; then
  packages+=(
    chromium            # headless browser: the test that explain's web page loads and shows every stage
    clang               # the fuzz build (bash scripts/build.sh fuzz): Debian 12's clang is clang 14
    libclang-rt-14-dev  # clang 14's runtimes: libFuzzer (-fsanitize=fuzzer), ASan, UBSan
    libomp-14-dev       # clang 14's OpenMP runtime (libomp): the library's kernels use OpenMP
  )
fi
if [[ "${1:-}" == "--reference" ]]; then
  packages+=(python3-torch python3-numpy)
  # jinja2 renders the chat-template fixtures (tests/reference/make_chat_template_fixtures.py);
  # the fixtures are committed, so the tests themselves need no Python.
  packages+=(python3-jinja2)
  # A Node.js that already brings its own npm (e.g. a vendor build) conflicts with Debian's npm package.
  command -v npm >/dev/null || packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages are installed"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "setup: installing ${missing[*]}"
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
