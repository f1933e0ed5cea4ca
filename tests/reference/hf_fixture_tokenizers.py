"""Small tokenizer.json files in the real formats, for the model fixtures of
make_hf_llama_fixtures.py: the same normalizers, pre-tokenizers, post-processors
and decoders as the published files of each family, over a vocabulary of about
300 tokens learned here from tiny Shakespeare, so that a fixture model of 320
rows can use them. Nothing of a published vocabulary is copied.

    byte_level("llama3")  Llama 3's Split regex + ByteLevel, <|begin_of_text|> added first
    byte_level("qwen")    Qwen2/3's NFC + Split regex + ByteLevel, ChatML's special tokens
    sentencepiece()       Llama 2 / Mistral: Prepend + Replace, byte fallback, <s> first

Chat templates are written here for the fixtures, in each family's format.
"""
import collections
import re

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
              r"|\s*[\r\n]+|\s+(?!\S)|\s+")

LLAMA3_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + message['content'] | trim + '<|eot_id|>' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}")
CHATML_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and message['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a fixture.<|im_end|>\\n' }}{% endif %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
INST_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
    "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
    "{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}")


def bytes_to_unicode():
    """GPT-2's byte alphabet: printable bytes stand for themselves, the rest map past U+0100."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[byte] = chr(byte)
        else:
            chars[byte] = chr(256 + extra)
            extra += 1
    return chars


def learn_merges(words, count):
    """Plain BPE over `words` (lists of symbols with their counts): the `count` most frequent pairs, in order."""
    words = {tuple(w): c for w, c in words.items()}
    merges = []
    for _ in range(count):
        pairs = collections.Counter()
        for word, freq in words.items():
            for pair in zip(word, word[1:]):
                pairs[pair] += freq
        if not pairs:
            break
        best = max(pairs.items(), key=lambda item: (item[1], item[0]))[0]
        merges.append(best)
        merged = {}
        for word, freq in words.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(word[i] + word[i + 1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + freq
        words = merged
    return merges


def byte_level(kind, corpus, vocab_limit=300):
    alphabet = bytes_to_unicode()
    vocab = {alphabet[b]: b for b in range(256)}
    words = collections.Counter(
        "".join(alphabet[b] for b in piece.encode("utf-8")) for piece in re.findall(r" ?[A-Za-z]+| ?[^A-Za-z\s]+|\s+", corpus))
    merges = learn_merges({tuple(w): c for w, c in words.items()}, vocab_limit - 256)
    for a, b in merges:
        vocab[a + b] = len(vocab)
    if kind == "llama3":
        specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"]
    else:
        specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    added = [{"id": len(vocab) + i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, t in enumerate(specials)]
    split = {"type": "Split", "pattern": {"Regex": LLAMA3_REGEX if kind == "llama3" else QWEN_REGEX},
             "behavior": "Isolated", "invert": False}
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None if kind == "llama3" else {"type": "NFC"},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            split, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                  "ignore_merges": kind == "llama3", "vocab": vocab, "merges": [f"{a} {b}" for a, b in merges]},
    }
    if kind == "llama3":
        tokenizer["post_processor"] = {"type": "TemplateProcessing",
                                       "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                                                  {"Sequence": {"id": "A", "type_id": 0}}],
                                       "pair": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                                                {"Sequence": {"id": "A", "type_id": 0}},
                                                {"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 1}},
                                                {"Sequence": {"id": "B", "type_id": 1}}],
                                       "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>",
                                                                              "ids": [added[0]["id"]],
                                                                              "tokens": ["<|begin_of_text|>"]}}}
        config = {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>", "chat_template": LLAMA3_TEMPLATE}
    else:
        tokenizer["post_processor"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                       "use_regex": False}
        config = {"bos_token": None, "eos_token": "<|im_end|>", "chat_template": CHATML_TEMPLATE}
    config.update({"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": 64})
    return tokenizer, config


def sentencepiece(corpus, vocab_limit=320):
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for byte in range(256):
        vocab[f"<0x{byte:02X}>"] = len(vocab)
    vocab["\u2581"] = len(vocab)
    letters = sorted(set(c for c in corpus if c.isalpha() and c.isascii()))
    for letter in letters:
        vocab[letter] = len(vocab)
    words = collections.Counter("\u2581" + w for w in re.findall(r"[A-Za-z]+", corpus))
    merges = learn_merges({tuple(w): c for w, c in words.items()}, vocab_limit - len(vocab))
    for a, b in merges:
        vocab[a + b] = len(vocab)
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for i, t in enumerate(["<unk>", "<s>", "</s>"])]
    tokenizer = {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": "\u2581"},
                                                           {"type": "Replace", "pattern": {"String": " "},
                                                            "content": "\u2581"}]},
        "pre_tokenizer": None,
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                           "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                                    {"SpecialToken": {"id": "<s>", "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}},
        "decoder": {"type": "Sequence", "decoders": [{"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
                                                     {"type": "ByteFallback"}, {"type": "Fuse"},
                                                     {"type": "Strip", "content": " ", "start": 1, "stop": 0}]},
        "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": vocab,
                  "merges": [f"{a} {b}" for a, b in merges]},
    }
    config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "add_bos_token": True,
              "chat_template": INST_TEMPLATE, "tokenizer_class": "LlamaTokenizer", "model_max_length": 32}
    return tokenizer, config
