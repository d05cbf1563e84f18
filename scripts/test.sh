#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what is missing (scripts/setup.sh),
# builds with g++ (release preset) and runs every suite through ctest: unit tests, golden
# tests (lit + FileCheck), conformance over ONNX's node tests, numerical equivalence on
# ONNX Runtime. Then builds with clang 14 under ASan+UBSan (asan preset) and runs the
# unit and golden tests again. Set SHAPEPROP_SKIP_ASAN=1 to skip that second build.
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
    ctest --preset asan -j "$jobs" -L 'unit|golden'
fi
