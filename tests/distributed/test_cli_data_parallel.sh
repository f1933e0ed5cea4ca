#!/usr/bin/env bash
# End-to-end test of `mpirun -np 2 tinygpt train`: rank 0 alone speaks and
# writes; a resumed 2-rank run writes the very checkpoint an uninterrupted one
# does; a job resumes on another number of ranks; and a rank that fails (a bad
# file on rank 1, an unwritable --out on rank 0, flags that differ) ends the
# whole job with its message and a non-zero exit, never a hang.
#
# usage: test_cli_data_parallel.sh path/to/tinygpt path/to/mpirun
# (CTest passes both, and Open MPI's switches for running as root on 2 cores.)
set -uo pipefail

tinygpt=${1:?usage: $0 path/to/tinygpt path/to/mpirun}
mpirun=${2:?usage: $0 path/to/tinygpt path/to/mpirun}
source "$(dirname "$0")/../cli/cli_test_helpers.sh"

for _ in $(seq 80); do echo "First Citizen: we are accounted poor citizens, the patricians good."; done >"$work/corpus.txt"
# A constant learning rate (no warmup, min-lr = lr), so that a run of 4 steps resumed to 8 is the run of 8.
small=(--layers 1 --heads 2 --dims 16 --block-size 8 --batch-size 2 --dropout 0.1 --eval-interval 4 --eval-iters 2
       --threads 1 --lr 3e-3 --min-lr 3e-3 --warmup 0)
# A hang would be the bug: every job gets a minute at most. `ranks ARGS : ARGS` gives each rank its own flags.
job() { timeout 60 "$mpirun" -np 2 "$@"; }
ranks() { timeout 60 "$mpirun" -np 1 "$@"; }

# Two ranks train; only rank 0 prints and logs.
job "$tinygpt" train --data "$work/corpus.txt" "${small[@]}" --iters 8 --out "$work/whole" 2>"$work/whole.log" \
  || fail "mpirun -np 2 train: non-zero exit: $(cat "$work/whole.log")"
grep -q "data parallel: 2 ranks over Open MPI" "$work/whole.log" || fail "train: the header does not name the job"
grep -q "8 steps of 2 ranks x 2 x 8 = 32 tokens" "$work/whole.log" || fail "train: the header lacks the job's tokens per step"
[[ $(grep -c "^eval step 0 " "$work/whole.log") -eq 1 ]] || fail "train: the evaluation line is not printed exactly once"
grep -q '"all_reduce_ms"' "$work/whole/metrics.jsonl" || fail "train: the metrics log has no all_reduce_ms"
[[ $(grep -c '"eval":true' "$work/whole/metrics.jsonl") -eq 3 ]] || fail "train: the metrics log lacks an evaluation or repeats one"

# Stopped at step 4 and resumed to 8 on 2 ranks: the same final checkpoint, byte for byte.
job "$tinygpt" train --data "$work/corpus.txt" "${small[@]}" --iters 4 --out "$work/split" 2>/dev/null \
  || fail "mpirun -np 2 train --iters 4 failed"
job "$tinygpt" train --data "$work/corpus.txt" --threads 1 --out "$work/split" --resume --iters 8 --decay-iters 8 2>"$work/resume.log" \
  || fail "mpirun -np 2 train --resume: $(cat "$work/resume.log")"
cmp -s "$work/whole/model.safetensors" "$work/split/model.safetensors" \
  || fail "a resumed 2-rank run did not write the uninterrupted run's checkpoint"
cmp -s "$work/whole/best.safetensors" "$work/split/best.safetensors" \
  || fail "a resumed 2-rank run did not write the uninterrupted run's best checkpoint"

# The Llama-style block (GQA, QK-norm, SwiGLU, RMSNorm) on 2 ranks, stopped and resumed: the same checkpoint too.
llama=(--positional rope --norm rmsnorm --mlp swiglu --kv-heads 1 --qk-norm --bias none --rope-pairing half)
job "$tinygpt" train --data "$work/corpus.txt" "${small[@]}" "${llama[@]}" --iters 8 --out "$work/llama_whole" 2>/dev/null \
  || fail "mpirun -np 2 train with the Llama-style block failed"
job "$tinygpt" train --data "$work/corpus.txt" "${small[@]}" "${llama[@]}" --iters 4 --out "$work/llama_split" 2>/dev/null \
  || fail "mpirun -np 2 train --iters 4 with the Llama-style block failed"
job "$tinygpt" train --data "$work/corpus.txt" --threads 1 --out "$work/llama_split" --resume --iters 8 --decay-iters 8 \
  2>/dev/null || fail "mpirun -np 2 train --resume with the Llama-style block failed"
cmp -s "$work/llama_whole/model.safetensors" "$work/llama_split/model.safetensors" \
  || fail "a resumed 2-rank Llama-style run did not write the uninterrupted run's checkpoint"

# The same checkpoint resumed by one process: allowed, with a note that the batches now differ.
cp -r "$work/split" "$work/single"
"$tinygpt" train --data "$work/corpus.txt" --out "$work/single" --resume --iters 10 2>"$work/single.log" \
  || fail "train --resume of a 2-rank checkpoint in one process: $(cat "$work/single.log")"
grep -q "written by a job of 2 ranks, this one has 1" "$work/single.log" || fail "resume on 1 rank: no note"

# Rank 1 cannot read its corpus: the job ends with rank 1's message (mpirun's MPMD form gives it other flags).
ranks "$tinygpt" train --data "$work/corpus.txt" "${small[@]}" --out "$work/bad" : \
  -np 1 "$tinygpt" train --data "$work/missing.txt" "${small[@]}" --out "$work/bad" >"$work/out" 2>"$work/err"
status=$?
[[ $status -ne 0 && $status -ne 124 ]] || fail "a rank with a missing file: exit code $status (124: the job hung)"
grep -q "tinygpt: error: rank 1 of 2: .*missing.txt" "$work/err" || fail "a rank with a missing file: $(cat "$work/err")"

# Rank 0 cannot create --out (its parent is a file): rank 0's message ends the job.
echo "not a directory" >"$work/file"
job "$tinygpt" train --data "$work/corpus.txt" "${small[@]}" --out "$work/file/run" >"$work/out" 2>"$work/err"
status=$?
[[ $status -ne 0 && $status -ne 124 ]] || fail "an unwritable --out: exit code $status (124: the job hung)"
grep -q "tinygpt: error: rank 0 of 2: " "$work/err" || fail "an unwritable --out: $(cat "$work/err")"

# Ranks given different settings (here rank 1's --weight-decay): refused, said once.
ranks "$tinygpt" train --data "$work/corpus.txt" "${small[@]}" --out "$work/differ" : \
  -np 1 "$tinygpt" train --data "$work/corpus.txt" "${small[@]}" --weight-decay 0 --out "$work/differ" >"$work/out" 2>"$work/err"
status=$?
[[ $status -eq 1 ]] || fail "ranks with different --weight-decay: exit code $status, expected 1"
[[ $(grep -c "tinygpt: error: train: rank 1 of 2 was started with other settings" "$work/err") -eq 1 ]] \
  || fail "ranks with different --weight-decay: $(cat "$work/err")"

finish "data-parallel CLI"
