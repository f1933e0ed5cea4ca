#!/usr/bin/env bash
# GPT-2's BPE on text that cannot be cut (one line of 8 MB of letters, no
# whitespace: a single pre-token) holds at most 20 bytes of memory per byte of
# it above the program's own (issue 32: it took about 28, with a 16-byte heap
# entry and three arrays of links; now the ids and an 8-byte heap entry). The
# release build only: the sanitizers' own memory would drown the figure.
#
# usage: test_cli_bpe_memory.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=$(realpath "${1:?usage: $0 path/to/tinygpt}")
source "$(dirname "$0")/cli_test_helpers.sh"
[[ -d ../shared/data/gpt2 ]] || { echo "skipped: the test reads ../shared/data/gpt2"; exit 77; }

python3 -c "
import random
random.seed(1)
open('$work/one_line.txt', 'w').write(''.join(random.choice('abcdefghijklmnopqrstuvwxyz') for _ in range(8_000_000)))"
echo "a few words." >"$work/small.txt"

# peak_mb FILE: the peak resident memory of tokenize --count FILE, in MB.
peak_mb() {
  python3 - "$tinygpt" "$1" <<'PY'
import resource, subprocess, sys
subprocess.run([sys.argv[1], "tokenize", "--vocab", "../shared/data/gpt2", "--count", sys.argv[2]],
               check=True, stdout=subprocess.DEVNULL)
print(int(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
PY
}
base=$(peak_mb "$work/small.txt")
long=$(peak_mb "$work/one_line.txt")
(( long - base < 160 )) || fail "8 MB of one piece took $((long - base)) MB above the program's $base MB (at most 160)"
echo "one piece of 8 MB: $((long - base)) MB above $base MB"
finish "BPE memory"
