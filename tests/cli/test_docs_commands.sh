#!/usr/bin/env bash
# README.md and docs/ stay true to the program (scripts/refresh_docs.py --check):
# every tinygpt command they quote names a subcommand and flags that exist and
# calls a bare `tinygpt`, README's PATH line follows its first command (and
# scripts/run.sh prints it), and the excerpts marked `output exact:` are what
# their commands print now. Also that the check fails on a quoted flag that
# does not exist, on an excerpt that no longer matches, on a command that calls
# tinygpt by its path and on a README without the PATH line.
#
# usage: test_docs_commands.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"
[[ -d ../shared/data/gpt2 ]] || { echo "skipped: the excerpts read ../shared/data/gpt2"; exit 77; }

python3 scripts/refresh_docs.py --check --tinygpt "$tinygpt" 2>"$work/check.log" \
  || fail "refresh_docs --check: $(cat "$work/check.log")"

# The check can fail: a copy of the docs with a misspelt flag and a changed excerpt.
mkdir -p "$work/copy/scripts"
cp -r README.md docs "$work/copy/"
cp scripts/refresh_docs.py scripts/run.sh "$work/copy/scripts/"
ln -s "$(cd .. && pwd)/shared" "$work/shared" 2>/dev/null  # ../shared beside the copy
sed -i 's/--prompt "ROMEO:" --html walk.html/--prompt "ROMEO:" --htm walk.html/' "$work/copy/README.md"
sed -i "s/^15496\t'Hello'$/15496\t'Hallo'/" "$work/copy/docs/tokenizer.md"
python3 "$work/copy/scripts/refresh_docs.py" --check --tinygpt "$tinygpt" 2>"$work/broken.log" \
  && fail "refresh_docs --check passed docs with a wrong flag and a wrong excerpt"
grep -q "has no flag --htm" "$work/broken.log" || fail "refresh_docs: the wrong flag not named: $(cat "$work/broken.log")"
grep -q "the output of .tinygpt tokenize" "$work/broken.log" \
  || fail "refresh_docs: the changed excerpt not found: $(cat "$work/broken.log")"

# A command that runs tinygpt by its path, and a README without its PATH line.
cp README.md "$work/copy/README.md"
cp -r docs "$work/copy/"
sed -i 's|^tinygpt plot --metrics|build/release/cli/tinygpt plot --metrics|' "$work/copy/README.md"
sed -i 's|^export PATH="$PWD/build/release/cli:$PATH"$|export PATH="$PWD/build/cli:$PATH"|' "$work/copy/README.md"
grep -q "^build/release/cli/tinygpt plot" "$work/copy/README.md" && grep -q '^export PATH="$PWD/build/cli:' "$work/copy/README.md" \
  || fail "the README copy was not changed: its plot command or PATH line moved"
python3 "$work/copy/scripts/refresh_docs.py" --check --tinygpt "$tinygpt" 2>"$work/broken.log" \
  && fail "refresh_docs --check passed a command called by its path and a wrong PATH line"
grep -q "calls build/release/cli/tinygpt; write a bare .tinygpt." "$work/broken.log" \
  || fail "refresh_docs: the command called by its path not named: $(cat "$work/broken.log")"
grep -q "the code block after .bash scripts/run.sh. is not .export PATH=" "$work/broken.log" \
  || fail "refresh_docs: the wrong PATH line not named: $(cat "$work/broken.log")"

finish "docs"
