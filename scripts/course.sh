#!/usr/bin/env bash
# The course (docs/course/): five models, each one piece more than the last,
# trained the same number of steps on tiny Shakespeare, each with the
# step-through of exactly that model, then a table of what each piece bought.
#
#   bash scripts/course.sh [--iters N] [--out DIR] [--tinygpt PATH] [--data FILE]
#
# Defaults: 2000 steps, runs/course, build/release/cli/tinygpt, tiny Shakespeare
# (scripts/data.sh). A chapter whose run is already in DIR is not trained again:
# its log is read back (remove DIR/NN-name to train it anew).
# Exit codes: 0 done, 2 a bad flag, 1 a chapter failed (its log is named).
set -euo pipefail
cd "$(dirname "$0")/.."

iters=2000 out=runs/course tinygpt=build/release/cli/tinygpt data=""
usage() { echo "course.sh: $1 (usage: bash scripts/course.sh [--iters N] [--out DIR] [--tinygpt PATH] [--data FILE])" >&2; exit 2; }
while (($#)); do
  case $1 in
    --iters | --out | --tinygpt | --data) (($# >= 2)) || usage "$1 needs a value"; declare "${1#--}=$2"; shift 2 ;;
    *) usage "unknown flag '$1'" ;;
  esac
done
[[ $iters =~ ^[1-9][0-9]*$ ]] || usage "--iters must be a positive integer, got '$iters'"
[[ -x $tinygpt ]] || usage "no tinygpt at '$tinygpt': build it with bash scripts/build.sh release, or give --tinygpt"
[[ -n $data ]] || data=$(bash scripts/data.sh)
mkdir -p "$out"

# name | what the chapter adds | its flags (on top of cpu-small: C = 128, T = 64, batch 12)
chapters=(
  "01-bigram|a table: each token's scores for the next|--layers 0 --positional rope --tie-embeddings off"
  "02-one-head|one attention head: a token reads the earlier ones|--layers 1 --heads 1 --mlp none"
  "03-multi-head|four heads of 32 channels in place of one of 128|--layers 1 --heads 4 --mlp none"
  "04-block|the MLP: each position thinks over what it read|--layers 1 --heads 4"
  "05-gpt|four blocks: cpu-small, what scripts/run.sh trains|--layers 4 --heads 4"
)
prompt="ROMEO:"

best_loss() { sed -n 's/.*best val loss \([0-9.]*\).*/\1/p' "$1" | tail -1; }
parameters() { sed -n 's/.*, \([0-9.]*M\) parameters.*/\1/p' "$1" | head -1; }
seconds() { sed -n 's/^done: step [0-9]* in \([0-9.]*\) s.*/\1/p' "$1" | tail -1; }

rows=() previous=""
for chapter in "${chapters[@]}"; do
  IFS='|' read -r name adds flags <<<"$chapter"
  run=$out/$name log=$out/$name/train.log
  if [[ -f $run/best.safetensors && -f $log ]]; then
    echo "== $name: already trained in $run (remove it to train anew)"
  else
    echo "== $name: $adds"
    mkdir -p "$run"
    # shellcheck disable=SC2086  # the chapter's flags are words
    "$tinygpt" train --data "$data" --config cpu-small $flags --iters "$iters" --eval-interval $((iters / 4 > 0 ? iters / 4 : 1)) \
      --out "$run" >"$log" 2>&1 || { echo "course.sh: $name failed to train; see $log" >&2; exit 1; }
  fi
  for page in explain.txt explain.html; do  # the terminal's walk-through, then the same as one page
    html=() && [[ $page == *.html ]] && html=(--html "$run/$page")
    "$tinygpt" explain --ckpt "$run" --prompt "$prompt" "${html[@]}" >"$run/$page.out" 2>"$run/explain.log" \
      || { echo "course.sh: $name: explain failed; see $run/explain.log" >&2; exit 1; }
  done
  mv "$run/explain.txt.out" "$run/explain.txt" && rm -f "$run/explain.html.out"
  loss=$(best_loss "$log")
  [[ -n $loss ]] || { echo "course.sh: $name: no val loss in $log" >&2; exit 1; }
  gained=$([[ -z $previous ]] && echo "" || awk -v a="$previous" -v b="$loss" 'BEGIN { printf "%+.3f", b - a }')
  rows+=("$(printf '| %-13s | %8s | %8s | %7s | %6s s | %s |' "$name" "$(parameters "$log")" "$loss" "$gained" \
    "$(seconds "$log")" "$adds")")
  previous=$loss
done

echo
echo "The course: $iters steps each on tiny Shakespeare (best val loss; gained: against the chapter before)"
echo "| chapter       | params   | val loss | gained  | train    | what it adds |"
echo "|---------------|----------|----------|---------|----------|--------------|"
printf '%s\n' "${rows[@]}"
echo
echo "Each chapter's step-through: $out/NN-name/explain.html (and explain.txt); live: tinygpt serve --ckpt $out/NN-name,"
echo "then http://127.0.0.1:8080/explain. The chapters: docs/course/README.md"
