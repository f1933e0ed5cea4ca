#!/usr/bin/env python3
"""Converts a TinyTalks split (Q:/A: pairs, a blank line between pairs) into
conversations for `tinygpt train --data FILE.jsonl` (chat SFT): one JSON object
a line, {"messages": [{"role": "user", "content": Q}, {"role": "assistant", "content": A}]},
no system message. A block of several Q:/A: lines becomes a multi-turn conversation.

  python3 examples/tinybot/tinytalks_to_jsonl.py train > train.jsonl
  python3 examples/tinybot/tinytalks_to_jsonl.py ../shared/data/tinytalks/val.txt --out val.jsonl

A split named train, val or test is looked for where the project keeps its data:
$TINYGPT_DATA_DIR/tinytalks, then ../shared/data/tinytalks beside the checkout
(TinyTalks 1.0.0, CC BY 4.0: that folder's README.md and LICENSE).
Python's standard library only.
"""
import argparse
import json
import os
import sys

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def split_path(name):
    if name not in ("train", "val", "test"):
        return name
    places = []
    if os.environ.get("TINYGPT_DATA_DIR"):
        places.append(os.path.join(os.environ["TINYGPT_DATA_DIR"], "tinytalks"))
    places.append(os.path.join(PROJECT_ROOT, "..", "shared", "data", "tinytalks"))
    for place in places:
        path = os.path.join(place, name + ".txt")
        if os.path.isfile(path):
            return os.path.normpath(path)
    sys.exit(f"tinytalks_to_jsonl: no {name}.txt in {' or '.join(places)}; give the file's path")


def conversations(text, path):
    """Yields the messages of each block; exits naming the line of a malformed one."""
    messages, expected = [], "Q: "
    for number, line in enumerate(text.splitlines() + [""], start=1):
        if not line.strip():
            if messages:
                if expected != "Q: ":
                    sys.exit(f"tinytalks_to_jsonl: {path} line {number}: a question without its answer")
                yield messages
            messages, expected = [], "Q: "
            continue
        if not line.startswith(expected):
            sys.exit(f"tinytalks_to_jsonl: {path} line {number}: expected a line starting with '{expected}'")
        role = "user" if expected == "Q: " else "assistant"
        messages.append({"role": role, "content": line[len(expected):].strip()})
        expected = "A: " if expected == "Q: " else "Q: "


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", help="train, val, test, or the path of a TinyTalks-style file")
    parser.add_argument("--out", help="the JSONL file to write (default: standard output)")
    arguments = parser.parse_args()
    path = split_path(arguments.split)
    with open(path, encoding="utf-8") as source:
        text = source.read()
    lines = [json.dumps({"messages": messages}, ensure_ascii=False) for messages in conversations(text, path)]
    jsonl = "\n".join(lines) + "\n"
    if arguments.out:
        with open(arguments.out, "w", encoding="utf-8") as output:
            output.write(jsonl)
    else:
        sys.stdout.write(jsonl)
    print(f"tinytalks_to_jsonl: {len(lines)} conversations from {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
