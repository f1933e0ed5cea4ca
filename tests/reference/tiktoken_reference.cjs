// Writes tests/fixtures/tokenizer/tiktoken_gpt2.json: input texts and the ids
// that tiktoken's "gpt2" encoding gives them, for test_tiktoken_reference.cpp.
//
// Run it through tiktoken_reference.sh, which installs npm's `tiktoken` into a
// scratch directory (never into the repository) and points TIKTOKEN_DIR at it.
// The texts are a hand-picked list of hard cases plus random strings drawn
// from a pool of tricky characters with a fixed seed, so the output is the
// same on every run.
"use strict";
const fs = require("fs");
const path = require("path");

const tiktokenDir = process.env.TIKTOKEN_DIR;
// With --ids FILE: print the ids of FILE's text on one line (for the
// exhaustive comparison in tiktoken_reference.sh) and write no fixture.
const idsOnly = process.argv[2] === "--ids";
const tiktoken = require(tiktokenDir ? path.join(tiktokenDir, "node_modules", "tiktoken") : "tiktoken");
const tiktokenVersion = require(
  tiktokenDir ? path.join(tiktokenDir, "node_modules", "tiktoken", "package.json") : "tiktoken/package.json").version;

const handPicked = [
  "Hello world", "Every effort moves you", "Every day holds a", "Hello, I am",
  "", " ", "  ", "\n", "\n\n", " \n", "a", "  a", "a  ", "a\n\nb", "a \n b", "a\t\tb", "\t\ta",
  "Hello   world  !", "   leading and trailing   ", "line1\r\nline2\r\n", "x\u000by\u000cz",
  "I'm you're we've they'll she'd it's don't", "'s 't 're 've 'm 'll 'd", "'S 'T 'RE 'LL", "''s ''", "rock'n'roll",
  "café naïve résumé über straße Ærøskøbing", "cafe\u0301 (decomposed)",
  "Καλημέρα κόσμε, ΑΒΓ αβγ", "Привет, мир! Ёжик в тумане.", "你好，世界。我爱自然语言处理。",
  "こんにちは世界 カタカナ ひらがな", "안녕하세요 세계", "مرحبا بالعالم ٣٤٥", "नमस्ते दुनिया", "สวัสดีชาวโลก", "שלום עולם",
  "👍 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇩🇪 ❤️", "emoji👍inside😀words", "a\u00a0b", "a \u00a0b", "a\u00a0 b", "a  \u00a0 b",
  "zero\u200bwidth\u200b space", "ideographic\u3000space\u3000\u3000x", "nel\u0085line", "file\u001cgroup\u001drecord\u001eunit\u001f.",
  "en\u2002em\u2003thin\u2009hair\u200a.", "line\u2028para\u2029end", "ogham\u1680mark", "narrow\u202fnbsp medium\u205fspace",
  "soft\u00adhyphen", "bom\ufeffstart", "ctrl\u0000\u0001\u007f chars", "Ⅻ ½ ² ³ ① 𝟙 ٣ ५", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𠀀𠀁",
  "int main() {\n    return 0;\n}\n", "def f(x):\n\treturn x ** 2  # square\n", "if (a && b || !c) { x += 1; }",
  "<html><body class=\"x\">Hi</body></html>", "https://example.com/path?q=1&r=2#frag", "user@example.com",
  "1234567890 3.14159 1,000,000 -42 +7 1e-9 0x1F", "2024-01-01T12:00:00Z", "$100 €200 £300 ¥400",
  "<|endoftext|>", "text<|endoftext|>more text", "<|endoftext|><|endoftext|>", "<|endoftext",
  "!!!??? ... --- *** ### @@@", "ALLCAPS lowercase MiXeD", "     ", "\t \t \n \n", "a" + " ".repeat(40) + "b",
  "x".repeat(300), "ab".repeat(200), "1".repeat(100), "!".repeat(120),
];

// Random strings over a pool of characters and snippets that stress the pattern.
const pool = [
  "a", "b", "e", "s", "t", "l", "d", "m", "Z", "Q", "0", "1", "7", "9", "'", "'s", "'ll", "'re", "'ve", "'t", "'d",
  "'m", "'S", " ", " ", " ", "  ", "\t", "\n", "\r", "\r\n", "\u000b", "\u000c", "\u001c", "\u001f", "\u0085",
  "\u00a0", "\u1680", "\u2000", "\u2009", "\u200a", "\u200b", "\u200c", "\u200d", "\u2028", "\u2029", "\u202f",
  "\u205f", "\u3000", "\ufeff", "\u00ad", "\ufe0f", "\u0301", "\u0308", ".", ",", "!", "?", "-", "_", "(", ")", "{",
  "}", "#", "$", "%", "&", "*", "+", "=", "<", ">", "/", "\\", "\"", "`", "~", "^", "|", "@", ";", ":",
  "é", "ü", "ñ", "ç", "Å", "ß", "ø", "α", "Ω", "λ", "ж", "Щ", "ё", "中", "文", "字", "ひ", "カ", "한", "국",
  "م", "ر", "٣", "न", "म", "स्", "ते", "ส", "ว", "ש", "ל", "👍", "🏽", "👨", "👩", "👧", "🇫", "🇷", "❤", "😀",
  "Ⅻ", "½", "²", "①", "𝟙", "५", "𝔘", "𝔫", "𠀀", "∑", "∞", "€", "£", "¥", "©", "™", "\u0000", "\u0001", "\u007f",
  "the", "The", " the", "ing", "tion", "Hello", " world", "123", "3.14", "<|endoftext|>",
  // Added by Unicode 15.1 / 16.0 (letters, digits to tiktoken) and 17.0 (not yet).
  "\u{2EBF0}", "\u{13460}", "\u{1C89}", "\u{16130}", "\u{1CCF0}", "\u{323B0}", "\u{10940}",
];
const randomTexts = require("./random_texts.cjs").randomTexts(pool, 500, 40, 20240229);

const encoding = tiktoken.get_encoding("gpt2");
if (idsOnly) {
  process.stdout.write(Array.from(encoding.encode_ordinary(fs.readFileSync(process.argv[3], "utf8"))).join(" ") + "\n");
  process.exit(0);
}
const cases = [];
for (const text of [...handPicked, ...randomTexts]) {
  cases.push({ text, special: false, ids: Array.from(encoding.encode_ordinary(text)) });
}
for (const text of handPicked.filter((t) => t.includes("<|endoftext|>"))) {
  cases.push({ text, special: true, ids: Array.from(encoding.encode(text, "all")) });
}
encoding.free();

const fixture = {
  about: "tiktoken gpt2 reference ids; regenerate with tests/reference/tiktoken_reference.sh",
  tiktoken_version: tiktokenVersion,
  cases,
};
const out = process.argv[2] ||
  path.join(__dirname, "..", "fixtures", "tokenizer", "tiktoken_gpt2.json");
fs.writeFileSync(out, JSON.stringify(fixture, null, 0).replace(/\},\{/g, "},\n{") + "\n");
console.log(`wrote ${cases.length} cases to ${out} (tiktoken ${tiktokenVersion})`);
