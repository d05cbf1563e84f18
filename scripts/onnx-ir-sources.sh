#!/usr/bin/env bash
# onnx-ir-sources.sh: prints the folder (in the machine-level cache) that holds onnx_ir's
# pure-Python sources, the package `onnx_ir` under it, for the Python tests of onnx_ir in
# and out (tests/python/test_onnx_ir.py; scripts/test-lite.sh runs them in its first sid
# root, which has the ml_dtypes and sympy onnx_ir needs). Debian packages no onnx_ir: the
# folder is made once from a git snapshot of the public onnx/ir-py repository
# (SHAPEPROP_ONNX_IR_GIT, a git directory; by default the one the machine's snapshots keep),
# at the commit tests/data/real-exports was exported with. Exits 1, saying why, when
# neither the folder nor a snapshot is there: the tests then do not run, and the caller says so.
set -euo pipefail
commit=a0cd443
cache=${SHAPEPROP_CACHE:-/var/cache/shapeprop}
dir=$cache/python-src/onnx-ir-$commit
if [ -f "$dir/onnx_ir/__init__.py" ]; then
  echo "$dir"
  exit 0
fi
git_dir=${SHAPEPROP_ONNX_IR_GIT:-/work/.mirror/onnx+ir-py/repo}
if ! git -C "$git_dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "onnx-ir-sources: no onnx_ir sources in $dir, and no snapshot of onnx/ir-py with $commit at $git_dir (SHAPEPROP_ONNX_IR_GIT)" >&2
  exit 1
fi
mkdir -p "$cache/python-src"
work=$(mktemp -d "$cache/python-src/.onnx-ir.XXXXXX")
trap 'rm -rf "$work"' EXIT
git -C "$git_dir" archive "$commit" src/onnx_ir LICENSE | tar -x -C "$work"
mkdir "$work/out"
mv "$work/src/onnx_ir" "$work/LICENSE" "$work/out/"
chmod -R a+rX "$work/out"
mv "$work/out" "$dir"
echo "$dir"
