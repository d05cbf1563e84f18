#!/usr/bin/env bash
# The whole test suite, from a fresh clone, in the three supported configurations (README,
# "Supported configurations"); each part's wall time, and the CPU time (user + sys) of what
# it ran, is printed as it ends.
#  0. Setup: installs what is missing (`scripts/setup.sh tests`: the library level and what
#     the test suite adds, for ONNX 1.21 and 1.17) and makes the two Debian sid roots of the
#     protobuf-lite configuration (scripts/lite-root.sh),
#     each once into the machine-level cache; on a fresh machine the roots are made in the
#     background while ONNX builds.
#  1. The default (ONNX 1.21.0): builds with g++ (release preset) and runs every suite
#     through ctest: unit tests, golden tests (lit + FileCheck), conformance over ONNX's
#     node tests, numerical equivalence on ONNX Runtime, the upstream patches. Then builds
#     with clang 14 under ASan+UBSan (asan preset, which also builds the libFuzzer targets)
#     and runs the unit, golden and fuzz-replay tests again, and runs each fuzz target for
#     60 s under libFuzzer, ASan and UBSan (scripts/fuzz.sh), one per core. Then builds the
#     library, the unit tests and the Python extension with clang 14 under ThreadSanitizer
#     (tsan preset) and runs the unit tests and the concurrency tests, C++ and Python, there
#     (scripts/test-tsan.sh).
#  2. ONNX 1.17.0: its unit and golden suites (scripts/test-onnx117.sh runs its whole
#     release suite; CI would not fit in its time with it).
#  3. Debian's own ONNX, built with protobuf-lite, in two Debian sid roots, experimental's
#     1.21.0-1 and sid's 1.20.0-6 (scripts/test-lite.sh): unit, golden, corpus and Python
#     suites, and `pip install .`, against the first; the build, unit, golden and Python
#     suites against the second.
# Every build compiles through ccache into the machine-level cache (CMakeLists.txt,
# scripts/ccache-env.sh, scripts/in-sid-root.sh), and the upstream suite keeps its ONNX
# builds there (tests/upstream): a second run, from any clone, compiles only what changed.
# SHAPEPROP_SKIP_ASAN=1 skips the ASan build and fuzzing, SHAPEPROP_SKIP_FUZZ=1 fuzzing,
# SHAPEPROP_SKIP_TSAN=1 the ThreadSanitizer part,
# SHAPEPROP_DEFAULT_ONLY=1 the other two configurations. SHAPEPROP_CACHE and CCACHE_DIR
# move the machine-level cache and the compiler cache (empty folders: a fresh machine's run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SHAPEPROP_JOBS:-$(nproc)}

# cpu_now sets `cpu` to the CPU time (user + sys, in whole seconds) of this shell's
# finished children, from `times`. `times` runs in this shell with its output to a file:
# in a pipe or a $(...) it would be a subshell's, whose children are none (every part
# read 0 s that way).
cpu_file=$(mktemp)
trap 'rm -f "$cpu_file"' EXIT
cpu_now() {
  times >"$cpu_file"
  cpu=$(tail -n1 "$cpu_file" | awk '{
    t = 0
    for (i = 1; i <= 2; i++) { split($i, p, "m"); sub("s", "", p[2]); t += p[1] * 60 + p[2] }
    printf "%d", t }')
}
start=$(date +%s)
part() {
  local name=$1 t0 c0
  shift
  cpu_now
  t0=$(date +%s) c0=$cpu
  echo "test: $name ..."
  "$@"
  cpu_now
  echo "test: $name took $(($(date +%s) - t0)) s (CPU $((cpu - c0)) s; load $(cut -d' ' -f1-3 /proc/loadavg))"
}

setup() {
  mkdir -p build
  # The sid roots need nothing that setup.sh builds: on a fresh machine they are made while
  # ONNX compiles (sid-root.sh locks each, so setup.sh's own call waits for the first; the
  # apt-get runs of both, mmdebstrap's install and the Debian packages', wait for each other
  # in scripts/debian-install.sh).
  local roots=
  if [ -z "${SHAPEPROP_DEFAULT_ONLY:-}" ]; then
    (bash scripts/lite-root.sh experimental && bash scripts/lite-root.sh sid) >build/lite-roots.log 2>&1 &
    roots=$!
  fi
  bash scripts/setup.sh tests
  if [ -z "${SHAPEPROP_DEFAULT_ONLY:-}" ]; then
    SHAPEPROP_ONNX=1.17 bash scripts/setup.sh tests
    wait "$roots" || { cat build/lite-roots.log; return 1; }
    grep -v '^/' build/lite-roots.log || true
  fi
}
part "setup: Debian packages, ONNX 1.21 and 1.17, sid roots" setup

default_configuration() {
  cmake --preset release >/dev/null
  cmake --build --preset release -j "$jobs"
  ctest --preset release -j "$jobs"
}
part "default configuration: release build, every suite" default_configuration

if [ -z "${SHAPEPROP_SKIP_ASAN:-}" ]; then
  asan() {
    cmake --preset asan >/dev/null
    cmake --build --preset asan -j "$jobs"
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --preset asan -j "$jobs" -L 'unit|golden|fuzz'
  }
  part "ASan+UBSan build (with the fuzz targets), unit, golden and fuzz replay" asan
  if [ -z "${SHAPEPROP_SKIP_FUZZ:-}" ]; then
    # The runtime oracle follows the generated models only: the real exports the binary and
    # text targets start from hold a pool whose window outgrows its input at the oracle's
    # binding (tools/fuzz/open-findings/README.md), which campaigns report until fixed.
    part "fuzzing, 60 s per target, $jobs at a time" \
      env SHAPEPROP_JOBS="$jobs" SHAPEPROP_FUZZ_PARALLEL="$jobs" SHAPEPROP_FUZZ_RUNTIME_TARGETS="model_structured differential" \
      bash scripts/fuzz.sh 60
  fi
fi

if [ -z "${SHAPEPROP_SKIP_TSAN:-}" ]; then
  part "ThreadSanitizer build (library, unit tests, Python extension), unit tests and the threads tests" \
    env SHAPEPROP_JOBS="$jobs" bash scripts/test-tsan.sh
fi

if [ -z "${SHAPEPROP_DEFAULT_ONLY:-}" ]; then
  part "ONNX 1.17 configuration, unit and golden (scripts/test-onnx117.sh)" \
    env SHAPEPROP_ONNX117_LABELS='unit|golden' bash scripts/test-onnx117.sh
  part "Debian's ONNX, protobuf-lite, 1.21.0-1 and 1.20.0-6 (scripts/test-lite.sh)" bash scripts/test-lite.sh
fi
cpu_now
echo "test: all parts took $(($(date +%s) - start)) s (CPU $cpu s)"
