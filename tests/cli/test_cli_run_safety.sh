#!/usr/bin/env bash
# Never lose a run (issue 31): a new run refuses a directory that holds one
# (--overwrite replaces it), a resumed run continues on the data its checkpoint
# records and refuses other data (--allow-new-data), Ctrl-C and SIGTERM save
# and exit 130/143, --save-interval saves between evaluations, a longer --iters
# holds min_lr past the original cosine (--decay-iters stretches it), the
# learning-rate defaults, usage errors exit 2, nanoGPT's names are suggested,
# a TOML --config-file, and sample's --temperature 0, random seed and short flags.
#
# usage: test_cli_run_safety.sh path/to/tinygpt   (CTest passes the built binary)
set -uo pipefail

tinygpt=$(realpath "${1:?usage: $0 path/to/tinygpt}")
source "$(dirname "$0")/cli_test_helpers.sh"

corpus=$work/corpus.txt
for i in $(seq 1 300); do echo "line $i: the quick brown fox jumps over the lazy dog, again and again."; done >"$corpus"
tiny=(--layers 1 --heads 2 --dims 16 --block-size 16 --batch-size 4 --eval-iters 2)
train() { "$tinygpt" train "$@" 2>>"$work/train.log"; }
lr_at() { grep "\"iter\":$2," "$1" | grep -v eval | sed 's/.*"lr":\([^,]*\),.*/\1/'; }

# 1. A directory that holds a run is refused; --overwrite replaces all of it.
train --data "$corpus" "${tiny[@]}" --iters 6 --eval-interval 3 --out "$work/run" || fail "first run"
cp "$work/run/best.safetensors" "$work/best.before"
lines_before=$(wc -l <"$work/run/metrics.jsonl")
expect_exit "train into a run" 2 "already holds a run" \
  "$tinygpt" train --data "$corpus" "${tiny[@]}" --iters 0 --out "$work/run"
cmp -s "$work/run/best.safetensors" "$work/best.before" || fail "a refused run changed best.safetensors"
[[ $(wc -l <"$work/run/metrics.jsonl") -eq $lines_before ]] || fail "a refused run changed the metrics log"
grep -q -- "--resume" "$work/err" && grep -q -- "--overwrite" "$work/err" || fail "the refusal names neither flag"
expect_exit "--resume with --overwrite" 2 "give one of them" \
  "$tinygpt" train --out "$work/run" --resume --overwrite
train --data "$corpus" "${tiny[@]}" --iters 2 --eval-interval 100 --out "$work/run" --overwrite \
  || fail "--overwrite refused"
[[ $(grep -c '"iter"' "$work/run/metrics.jsonl") -eq 4 ]] || fail "--overwrite kept the old log: $(cat "$work/run/metrics.jsonl")"
expect_exit "--log over --data" 2 "is the --data file" \
  "$tinygpt" train --data "$corpus" "${tiny[@]}" --iters 0 --out "$work/x" --log "$corpus"
expect_exit "--log over a checkpoint" 2 "is the run's checkpoint" \
  "$tinygpt" train --data "$corpus" "${tiny[@]}" --iters 0 --out "$work/x" --log "$work/x/model.safetensors"
[[ $(wc -c <"$corpus") -gt 20000 ]] || fail "the corpus was written over"

# 2. --resume takes its data from the checkpoint, and refuses other data or a changed file.
cp "$corpus" "$work/moved.txt"
train --data "$work/moved.txt" "${tiny[@]}" --iters 4 --eval-interval 2 --out "$work/resume" || fail "run to resume"
(cd "$work" && "$tinygpt" train --out resume --resume --iters 6 2>"$work/resume.log") \
  || fail "resume without --data: $(tail -2 "$work/resume.log")"
grep -q "moved.txt" "$work/resume.log" || fail "resume did not use the recorded data: $(grep data: "$work/resume.log")"
sed 's/fox/cat/' "$corpus" >"$work/other.txt"
expect_exit "resume on other data" 2 "is not the data this run trained on" \
  "$tinygpt" train --out "$work/resume" --resume --iters 8 --data "$work/other.txt"
echo "one more line" >>"$work/moved.txt"
expect_exit "resume on changed data" 2 "has changed since the run used it" \
  "$tinygpt" train --out "$work/resume" --resume --iters 8
train --out "$work/resume" --resume --iters 8 --data "$work/other.txt" --allow-new-data \
  || fail "--allow-new-data refused"
grep -q "allow-new-data: the run goes on with" "$work/train.log" || fail "--allow-new-data said nothing"
expect_exit "--allow-new-data alone" 2 "goes with --resume" \
  "$tinygpt" train --data "$corpus" --out "$work/y" --allow-new-data

# 3. Ctrl-C and SIGTERM: the step under way ends, model.safetensors holds it, exit 130 / 143;
#    the log has every step once and the run resumes from there.
big=(--layers 2 --heads 2 --dims 64 --block-size 32 --batch-size 8 --eval-iters 2)
for signal in INT TERM; do
  rm -rf "$work/stop"
  "$tinygpt" train --data "$corpus" "${big[@]}" --iters 100000 --eval-interval 100000 --out "$work/stop" \
    2>"$work/stop.log" &
  pid=$!
  for _ in $(seq 1 200); do grep -q '"iter":5,' "$work/stop/metrics.jsonl" 2>/dev/null && break; sleep 0.05; done
  kill -$signal $pid
  wait $pid
  status=$?
  expected=$([[ $signal == INT ]] && echo 130 || echo 143)
  [[ $status -eq $expected ]] || fail "SIG$signal: exit $status, expected $expected: $(tail -3 "$work/stop.log")"
  grep -q "Continue with: tinygpt train --out $work/stop --resume" "$work/stop.log" \
    || fail "SIG$signal: no resume line: $(tail -3 "$work/stop.log")"
  step=$(sed -n 's/.* at step \([0-9]*\) of .*/\1/p' "$work/stop.log")
  last=$(tail -1 "$work/stop/metrics.jsonl" | sed 's/.*"iter":\([0-9]*\).*/\1/')
  [[ -n $step && $step == "$last" && $step -ge 5 ]] || fail "SIG$signal: stopped at '$step', the log ends at '$last'"
  "$tinygpt" train --out "$work/stop" --resume --iters $((step + 2)) 2>"$work/stop2.log" \
    || fail "SIG$signal: resume failed: $(tail -2 "$work/stop2.log")"
  grep -q "resuming .* at step $step" "$work/stop2.log" || fail "SIG$signal: not resumed at step $step"
  [[ $(grep -v eval "$work/stop/metrics.jsonl" | grep -c '"iter"') -eq $((step + 2)) ]] \
    || fail "SIG$signal: the log does not have every step once"
done
# A second Ctrl-C ends at once; whatever checkpoint is there still loads.
rm -rf "$work/stop"
"$tinygpt" train --data "$corpus" "${big[@]}" --iters 100000 --eval-interval 20 --out "$work/stop" 2>/dev/null &
pid=$!
for _ in $(seq 1 200); do [[ -f $work/stop/model.safetensors ]] && break; sleep 0.05; done
kill -INT $pid; kill -INT $pid
wait $pid
[[ $? -eq 130 ]] || fail "two Ctrl-C: exit code not 130"
"$tinygpt" sample --ckpt "$work/stop" --tokens 5 --seed 1 >/dev/null 2>&1 || fail "two Ctrl-C: the checkpoint is damaged"

# One run per directory: a second one into the --out of a running one is refused, and runs once it ends.
rm -rf "$work/busy"
"$tinygpt" train --data "$corpus" "${big[@]}" --iters 100000 --eval-interval 100000 --out "$work/busy" 2>/dev/null &
pid=$!
for _ in $(seq 1 200); do grep -q '"iter":3,' "$work/busy/metrics.jsonl" 2>/dev/null && break; sleep 0.05; done
expect_exit "a second run in a busy directory" 1 "another tinygpt is training in $work/busy right now" \
  "$tinygpt" train --out "$work/busy" --resume --iters 200000
kill -INT $pid
wait $pid
"$tinygpt" train --out "$work/busy" --resume --iters 3 2>"$work/err" >/dev/null
grep -q "another tinygpt" "$work/err" && fail "the lock outlived the run it belonged to"

# A metrics log deleted under a run starts again at the next evaluation, said; a resume says the gap.
rm -rf "$work/gone"
"$tinygpt" train --data "$corpus" "${big[@]}" --iters 400 --eval-interval 200 --out "$work/gone" 2>"$work/gone.log" &
pid=$!
for _ in $(seq 1 200); do grep -q '"iter":5,' "$work/gone/metrics.jsonl" 2>/dev/null && break; sleep 0.05; done
rm "$work/gone/metrics.jsonl"
wait $pid || fail "a run whose log was deleted failed: $(tail -2 "$work/gone.log")"
grep -q "was deleted during the run; a new one starts at step 200" "$work/gone.log" || fail "the deleted log was not said"
grep -q '"iter":400,"lr"' "$work/gone/metrics.jsonl" 2>/dev/null || grep -q '"iter":400' "$work/gone/metrics.jsonl" \
  || fail "the log was not made again"
rm "$work/gone/metrics.jsonl"
"$tinygpt" train --out "$work/gone" --resume --iters 401 2>"$work/gone2.log" || fail "resume without a log"
grep -q "holds no line before this resume at step 400" "$work/gone2.log" || fail "the gap was not said: $(cat "$work/gone2.log")"

# --dtype bf16 is the run's own: a resume without the flag keeps it.
train --data "$corpus" "${tiny[@]}" --iters 2 --dtype bf16 --out "$work/bf16" || fail "bf16 run"
"$tinygpt" train --out "$work/bf16" --resume --iters 3 2>"$work/bf16.log" || fail "bf16 resume"
grep -q "bf16 matrix products" "$work/bf16.log" || fail "a bf16 run resumed in float32: $(grep training: "$work/bf16.log")"

# --save-interval: model.safetensors between evaluations (killed with -9, the run resumes past step 0).
rm -rf "$work/save"
"$tinygpt" train --data "$corpus" "${big[@]}" --iters 100000 --eval-interval 100000 --save-interval 3 \
  --out "$work/save" 2>/dev/null &
pid=$!
for _ in $(seq 1 200); do grep -q '"iter":8,' "$work/save/metrics.jsonl" 2>/dev/null && break; sleep 0.05; done
kill -9 $pid
wait $pid 2>/dev/null
"$tinygpt" sample --ckpt "$work/save/model.safetensors" --tokens 1 --seed 1 2>"$work/save.log" >/dev/null \
  || fail "--save-interval: the checkpoint does not load"
saved=$(sed -n 's/.*model.safetensors (step \([0-9]*\),.*/\1/p' "$work/save.log")
[[ -n $saved && $saved -ge 6 && $((saved % 3)) -eq 0 ]] || fail "--save-interval 3: resumed at step '$saved'"

# 4. A longer --iters on resume holds min_lr past the original cosine; --decay-iters stretches it.
train --data "$corpus" "${tiny[@]}" --iters 10 --warmup 2 --eval-interval 100 --out "$work/sched" || fail "schedule run"
train --out "$work/sched" --resume --iters 14 || fail "extend"
grep -q "runs past the end of this run's cosine at step 10" "$work/train.log" || fail "extending --iters said nothing"
for iter in 11 12 13 14; do
  [[ $(lr_at "$work/sched/metrics.jsonl" $iter) == 0.0002 ]] || fail "step $iter lr $(lr_at "$work/sched/metrics.jsonl" $iter), expected min_lr 0.0002"
done
train --out "$work/sched" --resume --iters 20 --decay-iters 20 || fail "--decay-iters"
lr15=$(lr_at "$work/sched/metrics.jsonl" 15)
python3 -c "import sys; sys.exit(0 if float('$lr15') > 0.0002 else 1)" || fail "--decay-iters did not stretch the cosine (lr $lr15)"

# A fixed flag that repeats the checkpoint's value changes nothing, so it is accepted; another value is not.
train --out "$work/sched" --resume --iters 21 --layers 1 --heads 2 --seed 1337 || fail "--resume with the run's own --layers refused"
expect_exit "--resume with another --layers" 2 "--layers cannot change in a resumed run" \
  "$tinygpt" train --out "$work/sched" --resume --iters 22 --layers 2

# 6. Learning-rate defaults: min_lr follows lr; each preset has its own lr.
"$tinygpt" train --data "$corpus" "${tiny[@]}" --iters 0 --lr 1e-4 --out "$work/lr" 2>"$work/lr.log" \
  || fail "--lr 1e-4 alone refused: $(tail -1 "$work/lr.log")"
grep -q "lr 0.0001 (warmup 100, cosine to 1e-05)" "$work/lr.log" || fail "min_lr not lr / 10: $(grep training: "$work/lr.log")"
"$tinygpt" train --data "$corpus" --config baby --layers 1 --dims 12 --heads 2 --block-size 16 --batch-size 2 \
  --eval-iters 1 --iters 0 --out "$work/baby" 2>"$work/baby.log" || fail "baby run"
grep -q "lr 0.001 (warmup 100, cosine to 0.0001)" "$work/baby.log" || fail "baby's lr: $(grep training: "$work/baby.log")"

# 5. Usage errors exit 2 and name the flag; nanoGPT's names are suggested.
expect_exit "negative --iters" 2 "--iters must be an integer >= 0, got -5" \
  "$tinygpt" train --data "$corpus" --iters -5 --out "$work/z"
expect_exit "preset typo" 2 "did you mean cpu-small?" "$tinygpt" train --data "$corpus" --config cpu_small --out "$work/z"
expect_exit "sample without a model" 2 "give a model" "$tinygpt" sample --prompt hi
expect_exit "nanoGPT's max_iters" 2 "tinygpt calls it --iters" "$tinygpt" train --max_iters 5
expect_exit "nanoGPT's max_new_tokens" 2 "tinygpt calls it --tokens" "$tinygpt" sample --max_new_tokens 5
expect_exit "snake case" 2 "tinygpt calls it --eval-interval" "$tinygpt" train --eval_interval 5
expect_exit "a flag without its value" 2 "--prompt needs a value after it" "$tinygpt" sample --prompt
cp "$work/run/best.safetensors" "$work/nan.safetensors"
python3 -c "
import struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
start = 8 + struct.unpack('<Q', data[:8])[0]
data[start:] = b'\xff' * (len(data) - start)  # every float a NaN
open(sys.argv[1], 'wb').write(data)" "$work/nan.safetensors"
"$tinygpt" eval --ckpt "$work/nan.safetensors" --data "$corpus" >"$work/out" 2>"$work/err"
[[ $? -eq 1 && ! -s $work/out ]] && grep -q "the model's weights are not finite" "$work/err" \
  || fail "eval of NaN weights printed a loss: $(cat "$work/out" "$work/err")"
expect_exit "an empty --stop" 2 "--stop needs a text" "$tinygpt" sample --ckpt "$work/run" --stop ""
expect_exit "a text as a checkpoint" 1 "not a safetensors file" "$tinygpt" sample --ckpt "$corpus"
grep -q "map_safetensors" "$work/err" && fail "internal name in: $(cat "$work/err")"
expect_exit "missing --weights" 1 "Hugging Face layout" "$tinygpt" sample --weights "$work/gpt2/"
expect_exit "new character for a resumed char model" 1 "vocabulary of the resumed run's model" \
  "$tinygpt" train --out "$work/resume" --resume --iters 9 --data <(echo "Zebra ~ 123 @@") --allow-new-data

# 7. A TOML config file whose names are the flags; the command line wins.
printf 'iters = 3\nlayers = 1\nheads = 2\ndims = 16\nblock-size = 16\nbatch-size = 4\neval-iters = 2\nlr = 0.005\n' \
  >"$work/run.toml"
"$tinygpt" train --config-file "$work/run.toml" --data "$corpus" --lr 0.004 --out "$work/toml" 2>"$work/toml.log" \
  || fail "--config-file: $(tail -1 "$work/toml.log")"
grep -q "training: 3 steps of 4 x 16 = 64 tokens, lr 0.004" "$work/toml.log" \
  || fail "--config-file not applied: $(grep training: "$work/toml.log")"

# sample: --temperature 0 is greedy (the same text whatever the seed); a random seed, printed; llama.cpp's flags.
"$tinygpt" sample -m "$work/run" -p "line" -n 20 --temperature 0 -s 1 >"$work/greedy1" 2>/dev/null || fail "greedy"
"$tinygpt" sample --ckpt "$work/run" --prompt "line" --tokens 20 --greedy --seed 2 >"$work/greedy2" 2>/dev/null
cmp -s "$work/greedy1" "$work/greedy2" || fail "--temperature 0 is not greedy"
"$tinygpt" sample --ckpt "$work/run" --tokens 5 2>"$work/seed1.log" >/dev/null
"$tinygpt" sample --ckpt "$work/run" --tokens 5 2>"$work/seed2.log" >/dev/null
seed1=$(sed -n 's/.*; seed \([0-9]*\) (drawn at random.*/\1/p' "$work/seed1.log")
seed2=$(sed -n 's/.*; seed \([0-9]*\) (drawn at random.*/\1/p' "$work/seed2.log")
[[ -n $seed1 && -n $seed2 && $seed1 != "$seed2" ]] || fail "no random seed printed: '$seed1' '$seed2'"

finish "run safety"
