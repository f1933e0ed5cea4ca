#!/usr/bin/env python3
"""Asks a chat model every question of a TinyTalks split (JSON Lines from
tinytalks_to_jsonl.py), each in a fresh conversation, and counts the answers
that are word for word the split's own (greedy decoding, `tinygpt chat`).

  python3 examples/tinybot/accuracy.py --tinygpt build/release/cli/tinygpt \
      --ckpt runs/tinybot/model.safetensors train.jsonl [--show 5]

Prints the rate, then the first --show answers that differ, beside the expected ones.
Python's standard library only.
"""
import argparse
import json
import subprocess
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("split", help="conversations, one JSON object a line")
    parser.add_argument("--tinygpt", required=True, help="the tinygpt program")
    parser.add_argument("--ckpt", required=True, help="the chat model: a checkpoint or a run directory")
    parser.add_argument("--show", type=int, default=5, help="answers that differ to print")
    args = parser.parse_args()

    pairs = []
    with open(args.split, encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            messages = json.loads(line)["messages"]
            if len(messages) == 2 and messages[0]["role"] == "user" and messages[1]["role"] == "assistant":
                pairs.append((messages[0]["content"], messages[1]["content"]))
    answers = []
    for question, _ in pairs:  # one process a question: a fresh conversation, whatever the reply holds
        run = subprocess.run([args.tinygpt, "chat", "--ckpt", args.ckpt, "--greedy", "-n", "128"],
                             input=question.replace("\n", " ") + "\n", capture_output=True, text=True, check=False)
        if run.returncode != 0:
            sys.exit(f"accuracy: tinygpt chat failed: {run.stderr.strip()}")
        answers.append(run.stdout.rstrip("\n"))
    right = sum(answer.strip() == expected for answer, (_, expected) in zip(answers, pairs))
    print(f"{args.split}: {right} of {len(pairs)} answered word for word ({100 * right / len(pairs):.1f}%)")
    shown = 0
    for answer, (question, expected) in zip(answers, pairs):
        if answer.strip() != expected and shown < args.show:
            print(f"  Q: {question}\n     expected: {expected}\n     answered: {answer.strip()}")
            shown += 1


if __name__ == "__main__":
    main()
