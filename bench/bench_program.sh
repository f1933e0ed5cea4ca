# Sourced by the bench/run_*.sh runners, from the project root.
#
# bench_program NAME prints the path of benchmark program NAME: from the build in
# $BENCH_BUILD_DIR when it is set (its bench/ folder, or the folder itself), else
# from build/release after building it there.
bench_program() {
  local name="$1" build_dir
  if [[ -n "${BENCH_BUILD_DIR:-}" ]]; then
    build_dir="$BENCH_BUILD_DIR"
  else
    bash scripts/build.sh release --target "$name" >/dev/null
    build_dir=build/release
  fi
  if [[ -x "$build_dir/bench/$name" ]]; then
    echo "$build_dir/bench/$name"
  else
    echo "$build_dir/$name"
  fi
}

# bench_tinygpt prints the path of the tinygpt program: $BENCH_BUILD_DIR/cli/tinygpt
# when that is set, else build/release/cli/tinygpt after building it there.
bench_tinygpt() {
  if [[ -n "${BENCH_BUILD_DIR:-}" ]]; then
    echo "$BENCH_BUILD_DIR/cli/tinygpt"
  else
    bash scripts/build.sh release --target tinygpt_cli >/dev/null
    echo build/release/cli/tinygpt
  fi
}

# run_repetitions NAME THREADS: every benchmark of program NAME (found as
# bench_program finds it) 7 times on THREADS threads, the repetitions in random
# order (so that drift of a shared machine hits every benchmark alike); prints
# the path of a new temporary file holding the results as JSON.
run_repetitions() {
  local program json
  program=$(bench_program "$1")
  json=$(mktemp)
  OMP_NUM_THREADS="$2" "$program" --benchmark_repetitions=7 --benchmark_enable_random_interleaving=true \
    --benchmark_format=json --benchmark_out="$json" --benchmark_out_format=json >/dev/null
  echo "$json"
}
