// Random strings drawn from a pool of tricky characters and snippets, with a
// fixed seed (mulberry32), so a fixture script writes the same texts on every
// run. Shared by tiktoken_reference.cjs and hf_tokenizer_reference.cjs.
"use strict";

// `count` texts of 1..maxLength pool entries each.
function randomTexts(pool, count, maxLength, seed) {
  function random() {  // mulberry32
    seed = (seed + 0x6d2b79f5) | 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  const texts = [];
  for (let i = 0; i < count; i++) {
    const length = 1 + Math.floor(random() * maxLength);
    let text = "";
    for (let j = 0; j < length; j++) text += pool[Math.floor(random() * pool.length)];
    texts.push(text);
  }
  return texts;
}

module.exports = { randomTexts };
