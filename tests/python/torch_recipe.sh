#!/usr/bin/env bash
# torch_recipe.sh BUILD: runs tests/python/torch_recipe.py (the torch export recipe of
# docs/python.md) in the Debian sid root `export` of the machine-level cache (python3-torch
# 2.14, python3-onnxruntime, python3-onnx 1.20.0-6; tests/data/real-exports/export.sh makes
# it), with the Python package of BUILD (a build of this clone against sid's libonnx-dev
# 1.20.0-6, the root's own ONNX: scripts/test-lite.sh's second root, build/lite-sid) and
# onnx_ir and onnxscript from scripts/python-sources.sh. Exits 0 when it passes, 1 when
# it fails, 3 (saying why) when the root or the sources are not there.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 BUILD" >&2; exit 2; }
build=$1
root=${SHAPEPROP_CACHE:-/var/cache/shapeprop}/sid-roots/export
[ -x "$root/usr/bin/python3" ] || { echo "torch_recipe: no sid root with torch at $root (tests/data/real-exports/export.sh makes it)"; exit 3; }
[ -f "$here/$build/python/shapeprop/__init__.py" ] || { echo "torch_recipe: no Python package in $build"; exit 2; }
ir=$(bash "$here/scripts/python-sources.sh" onnx_ir) || exit 3
script=$(bash "$here/scripts/python-sources.sh" onnxscript) || exit 3
exec bash "$here/scripts/in-sid-root.sh" "$root" -r "$ir" -r "$script" \
  env PYTHONPATH="/tmp/shapeprop/$build/python:/tmp/ro/1:/tmp/ro/2" PYTHONHASHSEED=0 OMP_NUM_THREADS=1 \
  PYTHONDONTWRITEBYTECODE=1 python3 tests/python/torch_recipe.py
