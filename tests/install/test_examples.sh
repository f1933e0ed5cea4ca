#!/usr/bin/env bash
# tinygpt as a library: installs the build into a scratch prefix, builds
# examples/ against it as a separate project (find_package(tinygpt),
# tinygpt::tinygpt, headers as <tinygpt/...>), trains a tiny model with one
# example and reads its next-token distribution with the other. Then a consumer
# with its own tensor/ and models/ folders builds with the umbrella header and
# tg::load_model, without MPI and with COMPONENTS mpi; the package names no path
# of this machine. Also checks that a library-only configuration needs neither
# CLI11 nor doctest.
#
# usage: test_examples.sh BUILD_DIR   (CTest passes the release build's directory)
set -uo pipefail

build_dir=${1:?usage: $0 BUILD_DIR}
tinygpt=/dev/null
source "$(dirname "$0")/../cli/cli_test_helpers.sh"

cmake --install "$build_dir" --prefix "$work/prefix" >"$work/install.log" 2>&1 || fail "cmake --install: $(tail -5 "$work/install.log")"
[[ -f $work/prefix/include/tinygpt/models/gpt.h ]] || fail "install: no include/tinygpt/models/gpt.h"
[[ -f $work/prefix/lib/cmake/tinygpt/tinygptConfig.cmake ]] || fail "install: no CMake package"
[[ -x $work/prefix/bin/tinygpt ]] || fail "install: no bin/tinygpt"
! find "$work/prefix/include" -name '*.cpp' | grep -q . || fail "install: sources among the headers"
! grep -rlq "immintrin.h" "$work/prefix/include" || fail "install: a header of vector intrinsics (tensor/cpu's own loops) among the headers"
# Every header an installed header includes is installed too.
while read -r included; do
  [[ -f $work/prefix/include/$included ]] || fail "install: an installed header includes $included, which is not installed"
done < <(grep -rhoE '#include "tinygpt/[^"]+"' "$work/prefix/include" | sed -E 's/#include "(.*)"/\1/' | sort -u)

cmake -S examples -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$work/prefix" \
  >"$work/configure.log" 2>&1 || fail "configure examples/: $(tail -20 "$work/configure.log")"
cmake --build "$work/examples" >"$work/build.log" 2>&1 || fail "build examples/: $(tail -30 "$work/build.log")"

for _ in $(seq 40); do echo "To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer"; done >"$work/corpus.txt"
"$work/examples/train_tiny" "$work/corpus.txt" "$work/run" >"$work/out" 2>"$work/err" || fail "train_tiny: $(cat "$work/err")"
grep -q "^trained 60 steps, best val loss " "$work/out" || fail "train_tiny: $(cat "$work/out")"
"$work/examples/next_token" "$work/run/best.safetensors" "To be, or not to b" >"$work/out" 2>"$work/err" \
  || fail "next_token: $(cat "$work/err")"
[[ $(grep -c "%  id " "$work/out") -eq 5 ]] || fail "next_token: expected 5 lines: $(cat "$work/out")"
# 60 steps on one repeated line learn it: after "to b" comes "e".
head -1 "$work/out" | grep -q " 'e'$" || fail "next_token: the likeliest token after 'to b' is not 'e': $(cat "$work/out")"
# A newline token is shown as '\n' and keeps the table at 5 lines (printed raw, it broke a line in two).
for _ in $(seq 200); do echo "abcdef"; done >"$work/lines.txt"
"$work/examples/train_tiny" "$work/lines.txt" "$work/lines" >/dev/null 2>"$work/err" || fail "train_tiny: $(cat "$work/err")"
"$work/examples/next_token" "$work/lines/best.safetensors" "abcdef" >"$work/out" 2>"$work/err" \
  || fail "next_token: $(cat "$work/err")"
[[ $(wc -l <"$work/out") -eq 5 ]] && head -1 "$work/out" | grep -qF "'\n'" \
  || fail "next_token: after 'abcdef' the likeliest token is not shown as '\\n' in a 5-line table: $(cat "$work/out")"
"$work/examples/next_token" "$work/run/missing.safetensors" "x" >/dev/null 2>"$work/err"
[[ $? -eq 1 ]] && grep -q "missing.safetensors" "$work/err" || fail "next_token on a missing file: $(cat "$work/err")"

# The run's directory works as well as its file (tg::load_model, as sample --ckpt DIR).
"$work/examples/next_token" "$work/run" "To be, or not to b" >"$work/out_dir" 2>"$work/err" \
  || fail "next_token on a run directory: $(cat "$work/err")"
cmp -s "$work/out_dir" <("$work/examples/next_token" "$work/run/best.safetensors" "To be, or not to b" 2>/dev/null) \
  || fail "next_token: the run directory and its best.safetensors differ"

# The package names no path of this machine: OpenBLAS is found again by the consumer.
openblas=$(grep -h "OPENBLAS_OPENMP_LIBRARY:FILEPATH=" "$build_dir/CMakeCache.txt" | cut -d= -f2)
! grep -rqF "$openblas" "$work/prefix/lib/cmake/tinygpt" || fail "install: the package names $openblas"
[[ -z $(grep -rl "include/tinygpt\"" "$work/prefix/lib/cmake/tinygpt") ]] || fail "install: include/tinygpt is on the consumer's path"

# A consumer with its own tensor/ and models/ folders (each header an #error): the umbrella
# header, one call to load a model, and no MPI (disabled) unless it asks for the component.
mkdir -p "$work/consumer/tensor" "$work/consumer/models"
for header in tensor/tensor.h tensor/view.h models/gpt.h training/checkpoint.h; do
  echo "#error the consumer's own $header was taken for tinygpt's" >"$work/consumer/$header"
done
cat >"$work/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
find_package(tinygpt REQUIRED)
add_executable(consumer main.cpp)
target_include_directories(consumer PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(consumer PRIVATE tinygpt::tinygpt)
if(WITH_MPI)
  find_package(tinygpt REQUIRED COMPONENTS mpi)
  target_link_libraries(consumer PRIVATE tinygpt::mpi)
  target_compile_definitions(consumer PRIVATE WITH_MPI)
endif()
CMAKE
cat >"$work/consumer/main.cpp" <<'CPP'
#include <iostream>
#include <tinygpt/distributed/job.h>
#include <tinygpt/tinygpt.h>
#ifdef WITH_MPI
#include <tinygpt/distributed/mpi_communicator.h>
#endif
int main(int argc, char** argv) {
#ifdef WITH_MPI
  tg::dist::enable_mpi_jobs();
#endif
  tg::LoadedModel loaded = tg::load_model(argv[1]);
  tg::GenerationOptions options;
  options.max_new_tokens = 8;
  options.sampling.greedy = true;
  std::string text;
  tg::generate(*loaded.model, loaded.tokenizer.encode("To be"), options, [&](int64_t id) {
    text += loaded.tokenizer.decode(std::vector<int64_t>{id});
    return true;
  });
  std::cout << text.size() << " " << tg::dist::built_with_mpi() << "\n";
}
CPP
cmake -S "$work/consumer" -B "$work/consumer/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_MPI=ON >"$work/consumer.log" 2>&1 && cmake --build "$work/consumer/build" >>"$work/consumer.log" 2>&1 \
  || fail "a consumer with its own tensor/ and models/, without MPI: $(grep -m3 -E 'error|Error' "$work/consumer.log")"
[[ $("$work/consumer/build/consumer" "$work/run" 2>&1) == "8 0" ]] || fail "the consumer: $("$work/consumer/build/consumer" "$work/run" 2>&1)"
if grep -q "TINYGPT_PACKAGE_USES_MPI\|tinygptMpiTargets" "$work/prefix/lib/cmake/tinygpt/tinygptConfig.cmake" \
   && [[ -f $work/prefix/lib/cmake/tinygpt/tinygptMpiTargets.cmake ]]; then
  cmake -S "$work/consumer" -B "$work/consumer/mpi" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DWITH_MPI=ON \
    >"$work/consumer_mpi.log" 2>&1 && cmake --build "$work/consumer/mpi" >>"$work/consumer_mpi.log" 2>&1 \
    || fail "a consumer with COMPONENTS mpi: $(grep -m3 -E 'error|Error' "$work/consumer_mpi.log")"
  [[ $("$work/consumer/mpi/consumer" "$work/run" 2>&1) == "8 1" ]] || fail "the MPI consumer: $("$work/consumer/mpi/consumer" "$work/run" 2>&1)"
fi

# A project that only links the library configures without CLI11 and doctest.
cmake -S . -B "$work/library-only" -G Ninja -DTINYGPT_CLI=OFF -DTINYGPT_TESTS=OFF -DTINYGPT_BENCH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_doctest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  >"$work/library-only.log" 2>&1 || fail "a library-only configuration failed: $(tail -20 "$work/library-only.log")"

finish "install and examples"
