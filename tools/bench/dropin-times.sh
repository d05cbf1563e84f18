#!/usr/bin/env bash
# dropin-times.sh [N] [BUILD]: the benchmark of the drop-ins (issue 51): each model of
# tests/data/real-exports through ORT's symbolic_shape_infer (auto_merge=True), shapeprop.ort_compat,
# onnx-shape-inference's infer_symbolic_shapes (policy "refine", on an onnx_ir.Model) and
# shapeprop.osi_compat, each call timed alone, the least of N calls (default 3), in
# milliseconds, one model a line (tests/dropin/compare.py --times). Runs in the sid root of
# scripts/test-lite.sh (sid's python3-onnx 1.20 and the python3-onnxruntime 1.23 it installs
# there) with the Python package of BUILD (default build/lite-sid, which test-lite.sh builds
# in that root) and the sources of scripts/python-sources.sh. Not a test: the times vary with
# the machine's load. Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
repeat=${1:-3} build=${2:-build/lite-sid}
root=$(bash "$here/scripts/lite-root.sh" sid)
[ -f "$here/$build/python/shapeprop/__init__.py" ] ||
  { echo "dropin-times: no Python package in $build (SHAPEPROP_LITE_ROOTS=sid bash scripts/test-lite.sh builds it)" >&2; exit 2; }
chroot "$root" dpkg-query -W -f='${Status}' python3-onnxruntime 2>/dev/null | grep -q 'ok installed' ||
  { echo "dropin-times: no python3-onnxruntime in $root (scripts/test-lite.sh installs it)" >&2; exit 2; }
ir=$(bash "$here/scripts/python-sources.sh" onnx_ir)
osi=$(bash "$here/scripts/python-sources.sh" onnx_shape_inference)
exec bash "$here/scripts/in-sid-root.sh" "$root" -r "$ir" -r "$osi" \
  env PYTHONPATH="/tmp/shapeprop/$build/python:/tmp/ro/1:/tmp/ro/2" PYTHONDONTWRITEBYTECODE=1 OMP_NUM_THREADS=1 \
  python3 tests/dropin/compare.py --times "$repeat"
