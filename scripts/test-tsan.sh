#!/usr/bin/env bash
# The ThreadSanitizer part of the test suite (scripts/test.sh; docs/testing.md,
# "Concurrency"): builds the library, the unit tests and the Python extension with clang 14
# under ThreadSanitizer (the tsan preset, build/tsan), then runs
#  - the concurrency tests (tests/unit/concurrency_test.cc: runs of the driver, which the
#    Python package calls, and of the library's functions, in several threads at once) in
#    a process of their own, then every unit test in one gtest process;
#  - the Python package's threads tests (tests/python/test_threads.py) on Debian's
#    /usr/bin/python3, which is not instrumented: the extension is, and ThreadSanitizer's
#    runtime must be in the process before it loads. clang 14's shared runtime
#    (libclang_rt.tsan-x86_64.so) crashes any program it is preloaded into on this
#    machine (Debian 12, glibc 2.36: /bin/true included), so the runtime preloaded is
#    g++ 12's libtsan.so.2, which serves clang 14's instrumentation (the same
#    compiler-rt interface).
# Any report fails the run (ThreadSanitizer's exit code 66; pytest runs with -s, so that a
# report made during a test that passes is printed, not captured). Usage:
#
#   bash scripts/test-tsan.sh [GTEST_FILTER]
#
# SHAPEPROP_JOBS: build jobs (default: nproc).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SHAPEPROP_JOBS:-$(nproc)}
filter=${1:-*}
runtime=$(g++ -print-file-name=libtsan.so)
if [ ! -e "$runtime" ]; then echo "test-tsan: g++'s libtsan.so is missing (Debian's libgcc-12-dev has it)" >&2; exit 2; fi
runtime=$(readlink -f "$runtime")

cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs" --target shapeprop_unit_tests shapeprop_python

# second_deadlock_stack: both stacks of a lock-order inversion.
export TSAN_OPTIONS="second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# The concurrency tests first, in a process of their own: their threads are then the first
# users of what the library makes on first use.
echo "test-tsan: the concurrency tests"
build/tsan/tests/unit/shapeprop_unit_tests --gtest_filter='Concurrency.*' --gtest_brief=1
# Each in a process of its own, which starts with no ONNX schema registered: threads
# registering schemas on demand as they look them up (src/support/onnx_schemas.cc).
echo "test-tsan: ONNX's schemas registered on demand by threads at once"
build/tsan/tests/unit/shapeprop_unit_tests --gtest_filter='OnnxSchemas.ThreadsLookUpAndRegisterAtOnce' --gtest_brief=1
echo "test-tsan: unit tests (--gtest_filter=$filter)"
build/tsan/tests/unit/shapeprop_unit_tests --gtest_filter="$filter" --gtest_brief=1

echo "test-tsan: the Python package's threads tests, with $runtime preloaded"
PYTHONPATH=build/tsan/python PYTHONDONTWRITEBYTECODE=1 LD_PRELOAD=$runtime \
  /usr/bin/python3 -m pytest -q -s -p no:cacheprovider --basetemp=build/tsan/pytest-threads tests/python/test_threads.py
