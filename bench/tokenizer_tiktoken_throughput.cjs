// tiktoken's side of bench/tokenizer_vs_tiktoken.sh: encode one file with
// npm's tiktoken ("gpt2", WASM build) and print MB/s, measured exactly as
// tokenizer_throughput.cpp measures ours.
//
// Usage: node tokenizer_tiktoken_throughput.cjs FILE [REPEATS]
// with TIKTOKEN_DIR pointing at a folder where `npm install tiktoken` was run.
"use strict";
const fs = require("fs");
const path = require("path");

const dir = process.env.TIKTOKEN_DIR;
const { get_encoding } = require(dir ? path.join(dir, "node_modules", "tiktoken") : "tiktoken");

const file = process.argv[2];
const repeats = Number(process.argv[3] || 5);
const text = fs.readFileSync(file, "utf8");
const bytes = Buffer.byteLength(text, "utf8");
const encoding = get_encoding("gpt2");

let tokens = encoding.encode_ordinary(text).length;  // warm-up, not timed
const seconds = [];
for (let i = 0; i < repeats; i++) {
  const start = process.hrtime.bigint();
  tokens = encoding.encode_ordinary(text).length;
  seconds.push(Number(process.hrtime.bigint() - start) / 1e9);
}
seconds.sort((a, b) => a - b);
const median = seconds[Math.floor(seconds.length / 2)];
console.log(`tiktoken ${(bytes / 1e6 / median).toFixed(3)} MB/s ${tokens} tokens ${bytes} bytes`);
encoding.free();
