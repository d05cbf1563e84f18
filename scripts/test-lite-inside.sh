#!/usr/bin/env bash
# test-lite-inside.sh NAME: run by scripts/test-lite.sh inside a sid root, in the clone: builds
# shapeprop against the root's libonnx-dev (protobuf-lite) in build/lite-NAME, checks that
# --version names that ONNX as protobuf-lite, and runs the suites of SHAPEPROP_LITE_LABELS
# (a ctest label regex; default unit|golden|corpus|python|onnxsuite); then, unless
# SHAPEPROP_LITE_PIP=0, `pip install --no-build-isolation .` into build/lite-NAME-venv (which
# sees the root's python3-onnx) and the Python tests against that install.
# The compiles go through the root's ccache into the folder in-sid-root.sh binds (CCACHE_DIR).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ $# -eq 1 ] || { echo "usage: $0 NAME" >&2; exit 2; }
build=build/lite-$1
jobs=${SHAPEPROP_JOBS:-$(nproc)}
labels=${SHAPEPROP_LITE_LABELS:-unit|golden|corpus|python|onnxsuite}

# lit and FileCheck of the root's newest LLVM (sid has no llvm-14).
filecheck=$(ls -d /usr/lib/llvm-*/bin/FileCheck | sort -V | tail -n1)
lit=$(ls -d /usr/lib/llvm-*/bin/lit | sort -V | tail -n1)
mkdir -p "$build"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHAPEPROP_WERROR=ON \
  -DSHAPEPROP_BUILD_BENCHMARKS=OFF -DPython_EXECUTABLE=/usr/bin/python3 \
  -DSHAPEPROP_FILECHECK="$filecheck" -DSHAPEPROP_LIT="$lit" -DSHAPEPROP_ONNX_IR_PATH="${SHAPEPROP_ONNX_IR_PATH:-}" \
  -DSHAPEPROP_OSI_PATH="${SHAPEPROP_OSI_PATH:-}" \
  -DSHAPEPROP_ONNX_PY_TESTS_DIR="${SHAPEPROP_ONNX_PY_TESTS_DIR:-}" \
  >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
grep -E '^-- shapeprop: ' "$build/configure.log" || true
# With onnx_ir's sources given (SHAPEPROP_ONNX_IR_PATH), its tests must be registered.
if [ -n "${SHAPEPROP_ONNX_IR_PATH:-}" ] && ! grep -q 'onnx_ir found' "$build/configure.log"; then
  echo "test-lite: onnx_ir's sources are at $SHAPEPROP_ONNX_IR_PATH, and configure did not find onnx_ir" >&2
  exit 1
fi
# With onnx-shape-inference's sources given (SHAPEPROP_OSI_PATH), the drop-in comparison must be.
if [ -n "${SHAPEPROP_OSI_PATH:-}" ] && ! grep -q 'dropin.real_exports' "$build/configure.log"; then
  echo "test-lite: onnx-shape-inference's sources are at $SHAPEPROP_OSI_PATH, and the drop-in comparison is not registered" >&2
  exit 1
fi
# With ONNX's Python tests given (SHAPEPROP_ONNX_PY_TESTS_DIR), onnxsuite must be registered.
if [ -n "${SHAPEPROP_ONNX_PY_TESTS_DIR:-}" ] && ! grep -q '(onnxsuite)$' "$build/configure.log"; then
  grep onnxsuite "$build/configure.log" >&2 || true
  echo "test-lite: ONNX's Python tests are at $SHAPEPROP_ONNX_PY_TESTS_DIR, and configure did not register onnxsuite" >&2
  exit 1
fi
cmake --build "$build" -j "$jobs"

# --version names the ONNX of the root's libonnx-dev, built with protobuf-lite.
onnx=$(dpkg-query -W -f='${Version}' libonnx-dev | sed 's/-[^-]*$//')
version=$("$build/tools/onnx-infer-shapes" --version)
echo "$version" | grep -E "^linked ONNX: " || true
if ! echo "$version" | grep -qE "^linked ONNX: $onnx, shared, protobuf-lite, package "; then
  echo "test-lite: --version does not name libonnx-dev's ONNX $onnx as shared and protobuf-lite" >&2
  exit 1
fi
ctest --test-dir "$build" -j "$jobs" --output-on-failure -L "$labels"

[ "${SHAPEPROP_LITE_PIP:-1}" != 0 ] || exit 0
# pip install . as a Python user does, into an environment that sees the root's packages.
# With -Werror as the build above, so that ccache serves its objects (the same compile
# commands: both build folders sit two levels under the clone).
venv=$build-venv
rm -rf "$venv" "$build-pip"
python3 -m venv --system-site-packages "$venv"
# CMAKE_BUILD_PARALLEL_LEVEL: scikit-build-core's build would otherwise take ninja's default
# (the cores + 2).
CMAKE_BUILD_PARALLEL_LEVEL=$jobs "$venv/bin/pip" install --no-build-isolation --no-index --no-deps \
  --config-settings=build-dir="$build-pip" --config-settings=cmake.define.SHAPEPROP_WERROR=ON . 2>&1 | tail -n 3
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
# The tests compare with the CLI of the build above, and check that the package they
# import is the installed one (SHAPEPROP_PACKAGE_DIR); none may skip.
out=$(cd build && SHAPEPROP_PACKAGE_DIR="$site/shapeprop" SHAPEPROP_CLI="$PWD/lite-$1/tools/onnx-infer-shapes" \
      PYTHONDONTWRITEBYTECODE=1 env ${SHAPEPROP_ONNX_IR_PATH:+"PYTHONPATH=$SHAPEPROP_ONNX_IR_PATH"} \
      "../$venv/bin/python" -m pytest -q -p no:cacheprovider ../tests/python 2>&1) \
  || { echo "$out"; exit 1; }
echo "pip install .: $(echo "$out" | tail -n 1)"
if echo "$out" | grep -qE '[0-9]+ skipped'; then echo "test-lite: a Python test skipped" >&2; exit 1; fi
