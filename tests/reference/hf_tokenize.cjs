// Hugging Face's Rust tokenizers (the Node binding @anush008/tokenizers) for
// make_hf_llama_fixtures.py: prints the ids of a text (with special tokens, as
// tokenizer(text) gives them), or the text of ids (skipping special tokens),
// as JSON on stdout.
//
//   NODE_PATH=build/npm/node_modules node hf_tokenize.cjs TOKENIZER_JSON encode TEXT
//   NODE_PATH=build/npm/node_modules node hf_tokenize.cjs TOKENIZER_JSON decode "[1, 2, 3]"
"use strict";
const { Tokenizer } = require("@anush008/tokenizers");

async function main() {
  const [file, action, argument] = process.argv.slice(2);
  const tokenizer = Tokenizer.fromFile(file);
  if (action === "encode") {
    const encoding = await tokenizer.encode(argument, null, { addSpecialTokens: true });
    process.stdout.write(JSON.stringify(encoding.getIds()));
  } else if (action === "decode") {
    process.stdout.write(JSON.stringify(await tokenizer.decode(JSON.parse(argument), true)));
  } else {
    throw new Error(`unknown action ${action} (encode or decode)`);
  }
}
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
