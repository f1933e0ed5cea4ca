#!/usr/bin/env python3
"""Writes a mixed-Unicode benchmark text: about 1 MB of words drawn, with a
fixed seed, from several scripts, emoji, numbers, code and odd whitespace.

Usage: tokenizer_make_mixed_text.py OUT_FILE [SIZE_BYTES]

Words are drawn at random rather than repeating one paragraph, so that no
tokenizer gains from a cache of repeated pieces more than real text allows.
Plain python3, no packages.
"""
import random
import sys

WORDS = {
    "english": "the quick brown fox jumps over lazy dog while we're sure it'll rain and they've gone home "
               "tokenizers split text into pieces before merging bytes".split(),
    "french": "café élève naïve où déjà garçon façon cœur être forêt hôpital très".split(),
    "german": "Straße Größe über Mädchen schön Fußgänger Bäckerei Übung weiß".split(),
    "greek": "καλημέρα κόσμε ελληνικά γλώσσα θάλασσα ουρανός Αθήνα ήλιος".split(),
    "russian": "привет мир язык программа большой маленький Москва ёжик щука".split(),
    "chinese": "你好 世界 自然 语言 处理 机器 学习 中文 分词 模型".split(),
    "japanese": "こんにちは 日本語 カタカナ ひらがな 東京 漢字 テスト".split(),
    "korean": "안녕하세요 한국어 세계 컴퓨터 언어 모델".split(),
    "arabic": "مرحبا العالم اللغة العربية كتاب ٣٤٥".split(),
    "hindi": "नमस्ते दुनिया भाषा हिन्दी किताब ५६".split(),
    "emoji": ["👍", "👍🏽", "👨‍👩‍👧‍👦", "🏳️‍🌈", "🇫🇷", "❤️", "😀😀", "🚀"],
    "numbers": ["42", "3.14159", "1,000,000", "2024-01-01", "0x1F", "½", "Ⅻ", "٣"],
    "code": ["int", "main()", "{", "}", "return", "x+=1;", "if(a&&b)", "std::vector<int>", "#include", "->"],
}
SEPARATORS = [" "] * 30 + ["\n", ", ", ". ", "  ", "\t", "\u00a0", "\u3000", "\n\n", " - "]


def main() -> None:
    out_path = sys.argv[1]
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 1 << 20
    rng = random.Random(1234)
    groups = list(WORDS.values())
    parts, length = [], 0
    while length < size:
        group = rng.choice(groups)
        for _ in range(rng.randint(3, 12)):  # a phrase in one script, then a switch
            piece = rng.choice(group) + rng.choice(SEPARATORS)
            parts.append(piece)
            length += len(piece.encode("utf-8"))
    with open(out_path, "w", encoding="utf-8", newline="") as out:
        out.write("".join(parts))


if __name__ == "__main__":
    main()
