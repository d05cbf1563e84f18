#!/usr/bin/env bash
# The main job on the bundled example, from a fresh clone: installs what is missing
# (scripts/setup.sh), builds onnx-infer-shapes, runs it on examples/torchlib_calls.onnxtxt
# and shows the result. The annotated model is also written to build/example/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SHAPEPROP_JOBS:-$(nproc)}

bash scripts/setup.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target onnx-infer-shapes >/dev/null

tool=build/release/tools/onnx-infer-shapes
mkdir -p build/example
"$tool" examples/torchlib_calls.onnxtxt -o build/example/torchlib_calls.onnx
"$tool" build/example/torchlib_calls.onnx
echo "(written to build/example/torchlib_calls.onnx)" >&2
