// The Rust side of bench/tokenizer_vs_tiktoken.sh --hf: encode one file with
// Hugging Face's tokenizers (Rust, through the Node binding
// @anush008/tokenizers) and print MB/s, measured exactly as
// tokenizer_throughput.cpp measures ours. encode() of one text runs on one
// thread (only encodeBatch spreads over threads).
//
// Usage: node tokenizer_hf_throughput.cjs TOKENIZER_JSON FILE [REPEATS]
// with NODE_PATH at build/npm/node_modules (bash scripts/setup.sh --test).
"use strict";
const fs = require("fs");
const { Tokenizer } = require("@anush008/tokenizers");

async function main() {
  const tokenizer = Tokenizer.fromFile(process.argv[2]);
  const text = fs.readFileSync(process.argv[3], "utf8");
  const repeats = Number(process.argv[4] || 5);
  const bytes = Buffer.byteLength(text, "utf8");
  const options = { addSpecialTokens: false };
  let tokens = (await tokenizer.encode(text, null, options)).getIds().length;  // warm-up, not timed
  const seconds = [];
  for (let i = 0; i < repeats; i++) {
    const start = process.hrtime.bigint();
    const encoding = await tokenizer.encode(text, null, options);
    seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
    tokens = encoding.getIds().length;
  }
  seconds.sort((a, b) => a - b);
  const median = seconds[Math.floor(seconds.length / 2)];
  console.log(`hf-tokenizers ${(bytes / 1e6 / median).toFixed(3)} MB/s ${tokens} tokens ${bytes} bytes`);
}
main();
