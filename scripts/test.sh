#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what is missing (scripts/setup.sh),
# builds with g++ (release preset) and runs every suite through ctest: unit tests, golden
# tests (lit + FileCheck), conformance over ONNX's node tests, numerical equivalence on
# ONNX Runtime. Then builds with clang 14 under ASan+UBSan (asan preset) and runs the
# unit, golden and fuzz-replay tests again, and runs each fuzz target for 60 s under
# libFuzzer, ASan and UBSan (scripts/fuzz.sh; the fuzz preset). Set SHAPEPROP_SKIP_ASAN=1
# to skip the ASan build, SHAPEPROP_SKIP_FUZZ=1 to skip fuzzing.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SHAPEPROP_JOBS:-$(nproc)}

bash scripts/setup.sh

cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

if [ -z "${SHAPEPROP_SKIP_ASAN:-}" ]; then
  cmake --preset asan >/dev/null
  cmake --build --preset asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --preset asan -j "$jobs" -L 'unit|golden|fuzz'
fi

if [ -z "${SHAPEPROP_SKIP_FUZZ:-}" ]; then
  SHAPEPROP_JOBS=$jobs bash scripts/fuzz.sh 60
fi
