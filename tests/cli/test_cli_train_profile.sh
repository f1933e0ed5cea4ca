#!/usr/bin/env bash
# tinygpt train --profile: at the end of the run, a table of where the steps'
# time went (tensor/runtime/profile.h, inspect/profile_table.h): one row per GEMM role
# and pass, one per op family and pass, other and total, then the GEMM bound.
# Checks the table's shape only, never a time.
#
# usage: test_cli_train_profile.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

for _ in $(seq 60); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
flags=(--data "$work/corpus.txt" --layers 1 --heads 2 --dims 16 --block-size 8 --batch-size 2 --eval-iters 1
       --seed 5)

# Read whole before grep: grep -q leaves at the first match, and the rest of the help would meet a closed pipe.
"$tinygpt" train --help >"$work/help.txt" && grep -q -- "--profile" "$work/help.txt" || fail "train --help does not list --profile"

if ! "$tinygpt" train "${flags[@]}" --iters 4 --out "$work/run" --profile 2>"$work/train.log"; then
  fail "train --profile: non-zero exit: $(cat "$work/train.log")"
fi
grep -q "^profile of 3 steps, per step" "$work/train.log" || fail "no profile header for 3 steps (4 minus the warm-up)"
grep -Eq "^op +pass +calls/step +ms/step +share +work/step +speed$" "$work/train.log" || fail "no column header"
for role in attn.qkv attn.c_proj mlp.c_fc mlp.c_proj lm_head; do
  for pass in fwd bwd; do
    grep -Eq "^gemm $role +$pass +[0-9]+ +[0-9.]+ +[0-9.]+% +[0-9.]+ GFLOP +[0-9.]+ GFLOP/s$" "$work/train.log" ||
      fail "no GEMM row for $role $pass"
  done
done
grep -Eq "^attention +fwd .* GFLOP/s$" "$work/train.log" || fail "no attention row with GFLOP/s"
for family in "layer norm" gelu cross-entropy embedding elementwise; do
  grep -Eq "^$family +(fwd|bwd) .* MB +[0-9.]+ GB/s$" "$work/train.log" || fail "no $family row with GB/s"
done
grep -Eq "^adamw +update .* GB/s$" "$work/train.log" || fail "no adamw row"
grep -Eq "^copy +(fwd|bwd) " "$work/train.log" || fail "no copy row"
grep -Eq "^allocation +(fwd|bwd) .* MB$" "$work/train.log" || fail "no allocation row"
grep -Eq "^other +[0-9.-]+ +[0-9.-]+%$" "$work/train.log" || fail "no other row"
grep -Eq "^total +[0-9.]+ +100.0% +[0-9.]+ GFLOP +[0-9.]+ GFLOP/s$" "$work/train.log" || fail "no total row"
grep -Eq "^sgemm on this machine: [0-9.]+ GFLOP/s on \([0-9]+ x [0-9]+\) @ \([0-9]+ x [0-9]+\)" "$work/train.log" ||
  fail "no sgemm speed line"
grep -Eq "^GEMM bound [0-9.]+ ms, step [0-9.]+ ms: the step runs at [0-9]+% of its GEMM bound$" "$work/train.log" ||
  fail "no GEMM bound line: $(tail -3 "$work/train.log")"

# Without --profile there is no table; a run of one step has only its warm-up, and says so.
"$tinygpt" train "${flags[@]}" --iters 2 --out "$work/plain" 2>"$work/plain.log" || fail "train: non-zero exit"
if grep -q "^profile of" "$work/plain.log"; then fail "a profile without --profile"; fi
"$tinygpt" train "${flags[@]}" --iters 1 --out "$work/one" --profile 2>"$work/one.log" ||
  fail "train --profile --iters 1: non-zero exit: $(cat "$work/one.log")"
grep -q "note: --profile skips the first step of a run (a warm-up)" "$work/one.log" ||
  fail "train --profile --iters 1: no note: $(tail -2 "$work/one.log")"

finish "train --profile"
