#!/usr/bin/env bash
# The main job on the bundled example, from a fresh clone: installs what is missing for the
# library, the tool and the Python package (scripts/setup.sh's library level: not what only
# the test suite needs), builds onnx-infer-shapes and the Python package, runs the tool on
# examples/torchlib_calls.onnxtxt (annotate, then --mode inline), shows the results (also
# written to build/example/), then does the same from Python (Debian's /usr/bin/python3).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${SHAPEPROP_JOBS:-$(nproc)}

bash scripts/setup.sh library
t0=$SECONDS
echo "== building onnx-infer-shapes and the Python package in build/release (usually 3 minutes on a quiet 2-core machine, 12 under load; seconds once built)" >&2
cmake --preset release >/dev/null
cmake --build --preset release -j "$jobs" --target onnx-infer-shapes shapeprop_python >/dev/null
echo "== built in $((SECONDS - t0)) s" >&2

tool=build/release/tools/onnx-infer-shapes
mkdir -p build/example
echo "== annotated: inferred types written per call site, and joined into each function's value_info" >&2
"$tool" examples/torchlib_calls.onnxtxt -o build/example/torchlib_calls.onnx
"$tool" build/example/torchlib_calls.onnx --no-infer
echo "== --mode inline: rank conditionals and CastLikes folded, functions inlined" >&2
"$tool" examples/torchlib_calls.onnxtxt --mode inline -o build/example/torchlib_calls.inlined.onnx
"$tool" build/example/torchlib_calls.inlined.onnx --no-infer
echo "(written to build/example/torchlib_calls.onnx and build/example/torchlib_calls.inlined.onnx)" >&2
echo "== from Python (/usr/bin/python3): shapeprop.specialize(path, inline=\"all\", return_report=True)" >&2
PYTHONPATH=build/release/python /usr/bin/python3 - examples/torchlib_calls.onnxtxt <<'PY'
import sys
import shapeprop
model, report = shapeprop.specialize(sys.argv[1], inline="all", return_report=True)
print("shapeprop:", report.summary[0], file=sys.stderr)
print("nodes:", report.before["nodes"], "->", report.after["nodes"], "; ops:", dict(report.after["ops"]), file=sys.stderr)
PY
