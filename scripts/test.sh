#!/usr/bin/env bash
# The whole test suite, from a fresh clone, in the three supported configurations (README,
# "Supported configurations"); each part's wall time is printed as it ends.
#  1. The default (ONNX 1.21.0): installs what is missing (scripts/setup.sh), builds with
#     g++ (release preset) and runs every suite through ctest: unit tests, golden tests
#     (lit + FileCheck), conformance over ONNX's node tests, numerical equivalence on ONNX
#     Runtime, the upstream patches. Then builds with clang 14 under ASan+UBSan (asan
#     preset) and runs the unit, golden and fuzz-replay tests again, and runs each fuzz
#     target for 60 s under libFuzzer, ASan and UBSan (scripts/fuzz.sh; the fuzz preset).
#  2. ONNX 1.17.0: its unit and golden suites (scripts/test-onnx117.sh runs its whole
#     release suite; CI would not fit in its time with it).
#  3. Debian's own ONNX, built with protobuf-lite, in a Debian sid root
#     (scripts/test-lite.sh): unit, golden, corpus and Python suites, and `pip install .`.
# SHAPEPROP_SKIP_ASAN=1 skips the ASan build, SHAPEPROP_SKIP_FUZZ=1 fuzzing,
# SHAPEPROP_DEFAULT_ONLY=1 the other two configurations.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SHAPEPROP_JOBS:-$(nproc)}

start=$(date +%s)
part() {
  local name=$1 t0
  shift
  t0=$(date +%s)
  echo "test: $name ..."
  "$@"
  echo "test: $name took $(($(date +%s) - t0)) s"
}

default_configuration() {
  bash scripts/setup.sh
  cmake --preset release >/dev/null
  cmake --build --preset release -j "$jobs"
  ctest --preset release -j "$jobs"
}
part "default configuration: setup, release build, every suite" default_configuration

if [ -z "${SHAPEPROP_SKIP_ASAN:-}" ]; then
  asan() {
    cmake --preset asan >/dev/null
    cmake --build --preset asan -j "$jobs"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --preset asan -j "$jobs" -L 'unit|golden|fuzz'
  }
  part "ASan+UBSan build, unit, golden and fuzz replay" asan
fi

if [ -z "${SHAPEPROP_SKIP_FUZZ:-}" ]; then
  part "fuzzing, 60 s per target" env SHAPEPROP_JOBS="$jobs" bash scripts/fuzz.sh 60
fi

if [ -z "${SHAPEPROP_DEFAULT_ONLY:-}" ]; then
  part "ONNX 1.17 configuration, unit and golden (scripts/test-onnx117.sh)" \
    env SHAPEPROP_ONNX117_LABELS='unit|golden' bash scripts/test-onnx117.sh
  part "Debian's ONNX, protobuf-lite (scripts/test-lite.sh)" bash scripts/test-lite.sh
fi
echo "test: all parts took $(($(date +%s) - start)) s"
