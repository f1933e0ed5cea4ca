#!/usr/bin/env bash
# `tinygpt prepare` from streams: a pipe (<(cat FILE)), standard input (-) and a
# named pipe give the same token files as the file itself, for the char and the
# GPT-2 tokenizer; meta.json names the stream as given; the copy in --out is
# gone afterwards, after an error too; a device is refused in one sentence.
#
# usage: test_cli_prepare_streams.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=$(realpath "${1:?usage: $0 path/to/tinygpt}")
source "$(dirname "$0")/cli_test_helpers.sh"

for _ in $(seq 300); do
  echo "First Citizen: we are accounted poor citizens, the patricians good."
done >"$work/corpus.txt"
printf 'a second document\n\n  with  odd   spacing\t\tand tabs\r\nand no final newline' >"$work/second.txt"

# same_tokens NAME DIR_A DIR_B: the token files of the two datasets are the same bytes.
same_tokens() {
  for file in train.bin val.bin; do
    cmp -s "$2/$file" "$3/$file" || fail "$1: $file differs between $2 and $3"
  done
}

# no_copies NAME DIR: no copy of a stream is left in DIR.
no_copies() {
  local left
  left=$(find "$2" -maxdepth 1 -name '.source*' 2>/dev/null)
  [[ -z $left ]] || fail "$1: a copy of the stream was left: $left"
}

# prepare_both NAME FLAGS...: from the files, then from the same files through pipes.
prepare_both() {
  local name=$1
  shift
  "$tinygpt" prepare --data "$work/corpus.txt" "$work/second.txt" "$@" --out "$work/$name.file" 2>"$work/$name.log" ||
    fail "$name from files: $(cat "$work/$name.log")"
  "$tinygpt" prepare --data <(cat "$work/corpus.txt") <(cat "$work/second.txt") "$@" --out "$work/$name.pipe" \
    2>"$work/$name.log" || fail "$name from pipes: $(cat "$work/$name.log")"
  same_tokens "$name through pipes" "$work/$name.file" "$work/$name.pipe"
  no_copies "$name through pipes" "$work/$name.pipe"
  grep -q '"file": "/dev/fd/[0-9]*",' "$work/$name.pipe/meta.json" || fail "$name: meta.json does not name the pipe"
  [[ $(grep -c '"stream": true' "$work/$name.pipe/meta.json") -eq 2 ]] || fail "$name: meta.json does not say stream"
  [[ $(grep -c '"xxh3"' "$work/$name.pipe/meta.json") -eq 4 ]] || fail "$name: meta.json has no hash of each stream"
  grep -q "^prepare: copying '/dev/fd/[0-9]*' 0.0 MB" "$work/$name.log" ||
    fail "$name: no copying line: $(cat "$work/$name.log")"
}

prepare_both char --tokenizer char
# A file, then standard input: the same dataset again.
cat "$work/second.txt" | "$tinygpt" prepare --data "$work/corpus.txt" - --tokenizer char --out "$work/char.stdin" \
  2>"$work/stdin.log" || fail "char from standard input: $(cat "$work/stdin.log")"
same_tokens "char from standard input" "$work/char.file" "$work/char.stdin"
grep -q '"file": "-",' "$work/char.stdin/meta.json" || fail "char from standard input: meta.json does not name -"

if [[ -f ../shared/data/gpt2/encoder.json ]]; then
  prepare_both gpt2 --tokenizer gpt2 --vocab ../shared/data/gpt2 --chunk-bytes 64
else
  echo "skipped the GPT-2 part: ../shared/data has no GPT-2 files"
fi

# A named pipe: written before prepare opens it, or after (prepare waits for a writer).
mkfifo "$work/fifo"
cat "$work/corpus.txt" >"$work/fifo" &
"$tinygpt" prepare --data "$work/fifo" "$work/second.txt" --tokenizer char --out "$work/char.fifo" 2>"$work/fifo.log" ||
  fail "char from a named pipe: $(cat "$work/fifo.log")"
wait
same_tokens "char from a named pipe" "$work/char.file" "$work/char.fifo"
(sleep 2 && cat "$work/corpus.txt" >"$work/fifo") &
"$tinygpt" prepare --data "$work/fifo" "$work/second.txt" --tokenizer char --out "$work/char.fifo_late" \
  2>"$work/fifo.log" || fail "char from a named pipe written late: $(cat "$work/fifo.log")"
wait
same_tokens "char from a named pipe written late" "$work/char.file" "$work/char.fifo_late"
no_copies "a named pipe" "$work/char.fifo_late"

# A named pipe that nothing writes into: refused after the wait, never a hang.
# (Run once, not by expect_exit, which runs it twice: the wait is 10 s.)
timeout 60 "$tinygpt" prepare --data "$work/fifo" --tokenizer char --out "$work/nobody" 2>"$work/err"
[[ $? -eq 1 ]] || fail "a named pipe with no writer: exit code not 1"
expected="prepare: '$work/fifo' is a named pipe that no program wrote into within 10 s; start the program that writes it first"
[[ $(cat "$work/err") == "tinygpt: error: $expected" ]] ||
  fail "a named pipe with no writer: $(cat "$work/err")"

# A stream that fails to encode: the error names it, the copy is gone, nothing looks done.
# (The copying line comes first: the error is the last line.)
"$tinygpt" prepare --data <(printf 'caf\xe9 latin-1\n') --tokenizer char --out "$work/failed" 2>"$work/err"
[[ $? -eq 1 ]] || fail "invalid UTF-8 through a pipe: exit code not 1"
tail -1 "$work/err" | grep -q "^tinygpt: error: '/dev/fd/[0-9]*': the corpus is not valid UTF-8: byte 0xE9" ||
  fail "invalid UTF-8 through a pipe: $(cat "$work/err")"
no_copies "a failed prepare" "$work/failed"
[[ ! -e $work/failed/meta.json ]] || fail "a failed prepare from a pipe left a meta.json"

# Devices: refused at once in one sentence, before --out is made.
expect_exit "/dev/zero" 1 "'/dev/zero' is a device or a socket, not a file; give a text file" \
  timeout 20 "$tinygpt" prepare --data /dev/zero --tokenizer char --out "$work/zero"
[[ ! -e $work/zero ]] || fail "prepare of /dev/zero made its --out"
expect_exit "standard input a device" 1 "standard input ('-') is a terminal or a device" \
  timeout 20 "$tinygpt" prepare --data - --tokenizer char --out "$work/zero" </dev/zero

finish "prepare streams"
