# Sourced by the bench/run_*.sh runners, from the project root.
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
