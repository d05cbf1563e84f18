#!/usr/bin/env bash
# run_patch.sh SOURCE_DIR WORK_DIR PATCH NAME: a proposal's patch to ONNX, tested (ctest
# label `upstream`, run by CI):
#   1. the ONNX 1.17.0 source that scripts/setup.sh keeps in its cache (sha256-checked)
#      is unpacked into WORK_DIR and PATCH applied with `patch -p1`, cleanly (no fuzz, no
#      offset);
#   2. that ONNX is built (static libraries and ONNX's own C++ tests, with the tests the
#      patch adds; `nice`, at most 2 jobs) and installed into WORK_DIR/install;
#   3. ONNX's C++ tests run, all of them;
#   4. the proposal's examples (tests/golden/proposals/*/*.onnxtxt, whose shapeprop side the
#      golden tests check) go through that ONNX's full checker, which must give the
#      verdict each states for NAME ("# UPSTREAM NAME: pass|fail: TEXT").
# Steps 1-2 are skipped when WORK_DIR already holds a build of the same patch.
set -euo pipefail

if [ $# -ne 4 ]; then
  echo "usage: $0 SOURCE_DIR WORK_DIR PATCH NAME" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
patch_file=$(cd "$(dirname "$3")" && pwd)/$(basename "$3")
name=$4
cache=${SHAPEPROP_CACHE:-/var/cache/shapeprop}
onnx_version=1.17.0
onnx_sha256=8d5e983c36037003615e5a02d36b18fc286541bf52de1a78f6cf9f32005a820e
tarball=$cache/onnx_$onnx_version.orig.tar.gz
jobs=${SHAPEPROP_UPSTREAM_JOBS:-2}

say() { printf 'upstream: %s\n' "$*"; }
if [ ! -f "$tarball" ]; then
  echo "upstream: no ONNX $onnx_version source at $tarball (scripts/setup.sh fetches it)" >&2
  exit 2
fi
echo "$onnx_sha256  $tarball" | sha256sum -c --quiet - || { echo "upstream: sha256 mismatch for $tarball" >&2; exit 2; }

stamp=$({ sha256sum <"$patch_file"; echo "$onnx_sha256"; } | sha256sum | cut -c1-16)
if [ "$(cat "$work/stamp" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$work"
  mkdir -p "$work"
  tar -xzf "$tarball" -C "$work"
  mv "$work/onnx-$onnx_version" "$work/src"
  say "applying $(basename "$patch_file") to ONNX $onnx_version"
  if ! (cd "$work/src" && patch -p1 --fuzz=0 --no-backup-if-mismatch <"$patch_file") >"$work/patch.log" 2>&1; then
    cat "$work/patch.log"
    echo "upstream: the patch does not apply" >&2
    exit 1
  fi
  if grep -qiE 'hunk|fuzz|offset' "$work/patch.log"; then
    cat "$work/patch.log"
    echo "upstream: the patch does not apply cleanly" >&2
    exit 1
  fi
  say "building the patched ONNX and its C++ tests into $work (several minutes)"
  cmake -S "$work/src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$work/install" \
    -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DONNX_ML=1 -DONNX_USE_PROTOBUF_SHARED_LIBS=ON \
    -DONNX_BUILD_TESTS=ON -DONNX_BUILD_BENCHMARKS=OFF -DONNX_BUILD_PYTHON=OFF -DONNX_WERROR=OFF >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; exit 1; }
  nice -n 10 cmake --build "$work/build" -j "$jobs" --target onnx_gtests >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log"; exit 1; }
  cmake --install "$work/build" >/dev/null
  echo "$stamp" >"$work/stamp"
fi

say "ONNX's C++ tests"
(cd "$work/build" && ./onnx_gtests --gtest_brief=1) || exit 1

say "the proposal's examples through the patched ONNX's full checker"
cmake -S "$src/tests/upstream/examples" -B "$work/examples" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DONNX_DIR="$work/install/lib/cmake/ONNX" >"$work/examples.log" 2>&1 || { cat "$work/examples.log"; exit 1; }
cmake --build "$work/examples" >>"$work/examples.log" 2>&1 || { cat "$work/examples.log"; exit 1; }
shopt -s nullglob
examples=("$src"/tests/golden/proposals/*/*.onnxtxt)
[ ${#examples[@]} -gt 0 ] || { echo "upstream: no examples under tests/golden/proposals" >&2; exit 2; }
"$work/examples/check-examples" "$name" "${examples[@]}"
