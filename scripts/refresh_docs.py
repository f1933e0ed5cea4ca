#!/usr/bin/env python3
"""Keeps README.md and docs/ true to what tinygpt does.

Three kinds of text in the Markdown files are checked against the program:

1. Every `tinygpt ...` command quoted in a fenced code block must name a
   subcommand that exists and only flags that subcommand takes (as its --help
   lists them). Commands joined with a trailing backslash count as one line.

2. Every quoted command runs as written after README's first command: it calls
   a bare `tinygpt` (never build/release/cli/tinygpt or another path), and
   README puts the build's cli/ directory on PATH in the code block right
   after that first command, with the line scripts/run.sh prints at its end:

       export PATH="$PWD/build/release/cli:$PATH"

3. Excerpts of output are fenced blocks right after a marker comment naming the
   command that prints them, run from the project root with the directory of
   the tinygpt being checked (--tinygpt) first on PATH, as README's PATH line
   puts the release build's there:

       <!-- output: tinygpt sample --ckpt runs/shakespeare-char --prompt "ROMEO:" ... -->
       ```
       ...what it printed...
       ```

   `output exact:` marks a command whose output is the same on every machine
   (no timing, no trained model, no floating-point sums whose order depends on
   the CPU's vector width): --check runs it and compares. A plain `output:`
   excerpt depends on the machine (a trained model, timings); --check leaves
   its text alone (its command is still checked as in 1), and a refresh
   replaces it with a new run's output.

usage:
  scripts/refresh_docs.py --check [--tinygpt PATH]   # the test (tests/cli/test_docs_commands.sh)
  scripts/refresh_docs.py [--tinygpt PATH]           # rewrite every excerpt from fresh runs
  scripts/refresh_docs.py --exact-only               # rewrite only the machine-independent ones

The default tinygpt is build/release/cli/tinygpt. The excerpts read
../shared/data (the corpus, GPT-2's BPE); a full refresh retrains
runs/shakespeare-char first, as `bash scripts/run.sh` does (about 40 s on
2 cores).
"""
import argparse
import os
import pathlib
import re
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^(\s*)```")
MARKER = re.compile(r"^<!-- output( exact)?: (.*) -->\s*$")


def markdown_files():
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").rglob("*.md"))


SHELL_BLOCKS = {"sh", "bash", "shell", "console"}


def fenced_blocks(lines, with_info=False):
    """(first line index inside, end index of the closing fence) of each fenced
    block, and with with_info its info string ("sh", or "" for a plain block)."""
    inside, info = None, ""
    for index, line in enumerate(lines):
        if FENCE.match(line):
            if inside is None:
                inside, info = index + 1, line.strip()[3:].strip()
            else:
                yield (inside, index, info) if with_info else (inside, index)
                inside = None


def command_lines(block):
    """The block's lines with backslash continuations joined."""
    joined, pending = [], ""
    for line in block:
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
        else:
            joined.append(pending + line)
            pending = ""
    if pending:
        joined.append(pending)
    return joined


SEPARATORS = re.compile(r"\|\||&&|[|;]|\$\(|`")
LAUNCHERS = {"mpirun", "time", "env", "exec"}


def tinygpt_invocations(line):
    """(subcommand or None, flags, program) for each tinygpt run on a shell
    line: where tinygpt (or a path ending in /tinygpt) is the command of a
    pipeline stage, after any VAR=value settings and a launcher such as mpirun;
    program is the word that names it ("tinygpt" or the path)."""
    found = []
    for stage in SEPARATORS.split(line):
        try:
            words = shlex.split(stage, comments=True)
        except ValueError:
            continue
        while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        if words and words[0].strip("[]") in LAUNCHERS:  # mpirun -np N tinygpt ...
            programs = [i for i, word in enumerate(words) if word == "tinygpt" or word.endswith("/tinygpt")]
            words = words[programs[0]:] if programs else []
        if not words or not (words[0] == "tinygpt" or words[0].endswith("/tinygpt")):
            continue
        rest = []
        for word in words[1:]:
            if word.startswith((">", "2>", "<")):
                break
            rest.append(word)
        subcommand = rest[0] if rest and not rest[0].startswith("-") else None
        flags = [word.split("=")[0] for word in rest if word.startswith("--")]
        found.append((subcommand, flags, words[0]))
    return found


class Program:
    def __init__(self, path):
        self.path = path
        self.known = {}

    def flags_of(self, subcommand):
        """The flags `tinygpt [subcommand] --help` lists, or None for no such subcommand."""
        if subcommand not in self.known:
            arguments = [self.path] + ([subcommand] if subcommand else []) + ["--help"]
            result = subprocess.run(arguments, capture_output=True, text=True)
            self.known[subcommand] = (
                set(re.findall(r"--[a-z0-9][a-z0-9-]*", result.stdout)) if result.returncode == 0 else None)
        return self.known[subcommand]


def check_commands(program, path, lines, counts):
    problems = []
    for first, end, info in fenced_blocks(lines, with_info=True):
        for line in command_lines(lines[first:end]):
            invocations = tinygpt_invocations(line)
            # A plain block is often a program's output: only a line that starts
            # with a tinygpt command counts there.
            if info not in SHELL_BLOCKS and not (invocations and tinygpt_invocations(SEPARATORS.split(line)[0])):
                continue
            for subcommand, flags, called in invocations:
                counts["commands"] += 1
                known = program.flags_of(subcommand)
                where = f"{path.relative_to(ROOT)}: `{line.strip()}`"
                if called != "tinygpt":
                    problems.append(f"{where}: calls {called}; write a bare `tinygpt` "
                                    f"(README's `{PATH_LINE}` puts it on PATH)")
                if known is None:
                    problems.append(f"{where}: no subcommand '{subcommand}'")
                    continue
                problems += [f"{where}: `tinygpt {subcommand or ''}` has no flag {flag}"
                             for flag in flags if flag not in known]
    return problems


PATH_LINE = 'export PATH="$PWD/build/release/cli:$PATH"'
FIRST_COMMAND = "bash scripts/run.sh"


def check_path_line(lines):
    """README's first command, then the PATH line (which names where the release
    build puts tinygpt) in the next code block; and scripts/run.sh prints it."""
    problems = []
    blocks = [lines[first:end] for first, end in fenced_blocks(lines)]
    commands = [[line.strip() for line in block if line.strip()] for block in blocks]
    if not commands or commands[0] != [FIRST_COMMAND]:
        problems.append(f"README.md: the first code block is not `{FIRST_COMMAND}` alone")
    elif len(commands) < 2 or commands[1] != [PATH_LINE]:
        problems.append(f"README.md: the code block after `{FIRST_COMMAND}` is not `{PATH_LINE}` alone")
    if not any(PATH_LINE in line and re.match(r"\s*(echo|printf)\b", line)
               for line in (ROOT / "scripts/run.sh").read_text().split("\n")):
        problems.append(f"scripts/run.sh: does not print `{PATH_LINE}` as README says it does")
    return problems


def run(command, program):
    environment = dict(os.environ, PATH=str(pathlib.Path(program.path).parent) + os.pathsep + os.environ["PATH"],
                       OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
    result = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        raise RuntimeError(f"`{command}` exited with {result.returncode}: {result.stderr.strip()[-500:]}")
    return result.stdout.rstrip("\n").split("\n")


def excerpts(lines):
    """(marker index, exact, command, first line inside the fence, closing fence index) of each excerpt."""
    blocks = dict(fenced_blocks(lines))
    for index, line in enumerate(lines):
        match = MARKER.match(line)
        if match and index + 2 in blocks:
            yield index, bool(match.group(1)), match.group(2), index + 2, blocks[index + 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="check, do not rewrite")
    parser.add_argument("--exact-only", action="store_true", help="refresh only the `output exact:` excerpts")
    parser.add_argument("--tinygpt", default=str(ROOT / "build/release/cli/tinygpt"))
    arguments = parser.parse_args()
    program = Program(os.path.abspath(arguments.tinygpt))
    problems, refreshed, counts = [], 0, {"commands": 0, "excerpts": 0}
    for path in markdown_files():
        lines = path.read_text().split("\n")
        problems += check_commands(program, path, lines, counts)
        if path.name == "README.md" and path.parent == ROOT:
            problems += check_path_line(lines)
        changed = False
        ordinal = 0
        while True:  # in order (a later excerpt may read what an earlier one's command wrote)
            found = list(excerpts(lines))
            if ordinal >= len(found):
                break
            marker, exact, command, first, end = found[ordinal]
            ordinal += 1
            if (arguments.check or arguments.exact_only) and not exact:
                continue
            counts["excerpts"] += 1
            try:
                output = run(command, program)
            except RuntimeError as error:
                problems.append(f"{path.relative_to(ROOT)}:{marker + 1}: {error}")
                continue
            if arguments.check:
                if output != lines[first:end]:
                    problems.append(f"{path.relative_to(ROOT)}:{marker + 1}: the output of `{command}` is now:\n"
                                    + "\n".join(output))
            elif output != lines[first:end]:
                lines[first:end] = output
                changed = True
                refreshed += 1
        if changed:
            path.write_text("\n".join(lines))
    for problem in problems:
        print(f"refresh_docs: {problem}", file=sys.stderr)
    print(f"refresh_docs: {counts['commands']} quoted tinygpt commands checked against --help; "
          f"{counts['excerpts']} excerpt(s) {'compared' if arguments.check else 'run'}"
          + ("" if arguments.check else f", {refreshed} rewritten"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
