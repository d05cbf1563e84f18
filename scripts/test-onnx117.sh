#!/usr/bin/env bash
# test-onnx117.sh: the second tested configuration, shapeprop against ONNX 1.17.0 (built
# from Debian 13's source package into the machine-level cache by
# `SHAPEPROP_ONNX=1.17 bash scripts/setup.sh`): builds the onnx117 preset (g++, release,
# build/onnx117) and runs its release suite (ctest: what the release preset runs, against
# 1.17's node tests and conformance baselines, but the upstream patch tests, which patch
# and build ONNX sources of their own whatever shapeprop links). SHAPEPROP_ONNX117_LABELS,
# when set, is a ctest label regex that runs only those suites (e.g. 'unit|golden').
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SHAPEPROP_JOBS:-$(nproc)}

SHAPEPROP_ONNX=1.17 bash scripts/setup.sh
cmake --preset onnx117 >/dev/null
cmake --build --preset onnx117 -j "$jobs"
if [ -n "${SHAPEPROP_ONNX117_LABELS:-}" ]; then
  ctest --preset onnx117 -j "$jobs" -L "$SHAPEPROP_ONNX117_LABELS"
else
  ctest --preset onnx117 -j "$jobs" -LE upstream
fi
