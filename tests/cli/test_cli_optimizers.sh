#!/usr/bin/env bash
# train --optimizer muon, --schedule wsd, --target-loss and --eval-whole-val (issue 37):
# the run header names the parameter groups and the schedule, the checkpoint keeps
# the optimiser (a resumed run refuses another), a reached target stops the run,
# the metrics carry the wall time, and out-of-range values are usage errors.
#
# usage: test_cli_optimizers.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt}
source "$(dirname "$0")/cli_test_helpers.sh"

for _ in $(seq 60); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
shape=(--layers 2 --heads 2 --dims 16 --block-size 8 --batch-size 4)
run=(--data "$work/corpus.txt" --eval-interval 4 --eval-iters 2 --seed 5)

"$tinygpt" train "${run[@]}" "${shape[@]}" --iters 8 --warmup 2 --optimizer muon --muon-lr 0.03 --schedule wsd --cooldown 0.5 \
  --out "$work/muon" 2>"$work/muon.log" || fail "train --optimizer muon: non-zero exit: $(cat "$work/muon.log")"
grep -q "^optimizer: Muon (lr 0.03, momentum 0.95 Nesterov, 5 Newton-Schulz steps, weight decay 0) on 8 hidden matrices" \
  "$work/muon.log" || fail "train --optimizer muon: the header does not name Muon's group: $(grep optimizer "$work/muon.log")"
grep -q "AdamW (lr .*) on the embeddings, head, norms and biases" "$work/muon.log" \
  || fail "train --optimizer muon: the header does not name AdamW's group"
grep -q "warmup 2, constant, then linear to .* from step 4" "$work/muon.log" \
  || fail "train --schedule wsd: the header does not say where the cool-down starts: $(grep '^training' "$work/muon.log")"
"$tinygpt" train --data "$work/corpus.txt" --out "$work/muon" --resume --iters 10 2>"$work/resume.log" \
  || fail "train --resume of a Muon run: non-zero exit: $(cat "$work/resume.log")"
grep -q "^optimizer: Muon" "$work/resume.log" || fail "train --resume: the resumed run is not Muon's"
expect_exit "resume with another optimiser" 2 "--optimizer cannot change in a resumed run" \
  "$tinygpt" train --data "$work/corpus.txt" --out "$work/muon" --resume --iters 12 --optimizer adamw

# A target the first evaluation already meets stops the run there, saved; the metrics carry elapsed_s.
"$tinygpt" train "${run[@]}" "${shape[@]}" --iters 40 --target-loss 9 --eval-whole-val 1 --out "$work/target" \
  2>"$work/target.log" || fail "train --target-loss: non-zero exit: $(cat "$work/target.log")"
grep -q "evaluation: every 4 steps, val loss over the whole val split; stops when it reaches 9" "$work/target.log" \
  || fail "train --target-loss: the header does not say how it evaluates and stops"
grep -q "target reached: val loss .* <= 9.* at step 0" "$work/target.log" || fail "train --target-loss: no 'target reached' at step 0"
grep -q "^done: step 0 in .*, the target val loss reached" "$work/target.log" || fail "train --target-loss: the run went on"
[[ -f $work/target/model.safetensors ]] || fail "train --target-loss: the run was not saved"
grep -q '"elapsed_s":' "$work/target/metrics.jsonl" || fail "train: the evaluation's metrics line lacks elapsed_s"

expect_exit "an unknown optimiser" 2 "--optimizer must be adamw or muon, got 'lion'" \
  "$tinygpt" train "${run[@]}" --optimizer lion --out "$work/bad"
expect_exit "an unknown schedule" 2 "--schedule must be cosine or wsd, got 'linear'" \
  "$tinygpt" train "${run[@]}" --schedule linear --out "$work/bad"
expect_exit "a cooldown above 1" 2 "--cooldown must be a fraction from 0 to 1, got 1.5" \
  "$tinygpt" train "${run[@]}" --cooldown 1.5 --out "$work/bad"
expect_exit "a momentum of 1" 2 "--muon-momentum must be in [0, 1), got 1" \
  "$tinygpt" train "${run[@]}" --muon-momentum 1 --out "$work/bad"
expect_exit "no Newton-Schulz steps" 2 "--muon-ns-steps must be an integer from 1 to 100, got 0" \
  "$tinygpt" train "${run[@]}" --muon-ns-steps 0 --out "$work/bad"
[[ ! -e $work/bad ]] || fail "a refused run wrote $work/bad"

finish "optimizer CLI"
