#!/usr/bin/env bash
# Run by scripts/test-lite.sh inside the sid root, in the clone: builds shapeprop against
# the root's libonnx-dev (protobuf-lite) in build/lite and runs the unit, golden, corpus
# and Python suites; then `pip install --no-build-isolation .` into build/lite-venv (which
# sees the root's python3-onnx) and the Python tests against that install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SHAPEPROP_JOBS:-$(nproc)}

# lit and FileCheck of the root's newest LLVM (sid has no llvm-14).
filecheck=$(ls -d /usr/lib/llvm-*/bin/FileCheck | sort -V | tail -n1)
lit=$(ls -d /usr/lib/llvm-*/bin/lit | sort -V | tail -n1)
cmake -S . -B build/lite -G Ninja -DCMAKE_BUILD_TYPE=Release -DSHAPEPROP_WERROR=ON \
  -DSHAPEPROP_BUILD_BENCHMARKS=OFF -DPython_EXECUTABLE=/usr/bin/python3 \
  -DSHAPEPROP_FILECHECK="$filecheck" -DSHAPEPROP_LIT="$lit" >/dev/null
cmake --build build/lite -j "$jobs"
ctest --test-dir build/lite -j "$jobs" --output-on-failure -L 'unit|golden|corpus|python'

# pip install . as a Python user does, into an environment that sees the root's packages.
rm -rf build/lite-venv build/lite-pip
python3 -m venv --system-site-packages build/lite-venv
# CMAKE_BUILD_PARALLEL_LEVEL: scikit-build-core's build would otherwise take ninja's default
# (the cores + 2).
CMAKE_BUILD_PARALLEL_LEVEL=$jobs build/lite-venv/bin/pip install --no-build-isolation --no-index --no-deps \
  --config-settings=build-dir=build/lite-pip . 2>&1 | tail -n 3
site=$(build/lite-venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
# The tests compare with the CLI of the build above, and check that the package they
# import is the installed one (SHAPEPROP_PACKAGE_DIR); none may skip.
out=$(cd build && SHAPEPROP_PACKAGE_DIR="$site/shapeprop" SHAPEPROP_CLI="$PWD/lite/tools/onnx-infer-shapes" \
      PYTHONDONTWRITEBYTECODE=1 lite-venv/bin/python -m pytest -q -p no:cacheprovider ../tests/python 2>&1) \
  || { echo "$out"; exit 1; }
echo "pip install .: $(echo "$out" | tail -n 1)"
if echo "$out" | grep -qE '[0-9]+ skipped'; then echo "test-lite: a Python test skipped" >&2; exit 1; fi
