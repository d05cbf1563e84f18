#!/usr/bin/env bash
# python-sources.sh NAME: prints the folder (in the machine-level cache) that holds the
# pure-Python package NAME (onnx_ir, onnxscript or onnx_shape_inference) under it, for the
# tests that need it: onnx_ir in and out (tests/python/test_onnx_ir.py, run by
# scripts/test-lite.sh in its sid roots), the torch export recipe (tests/python/torch_recipe.py,
# which torch's dynamo exporter needs onnx_ir and onnxscript for) and the drop-in comparison
# (tests/dropin: onnx_ir and onnx_shape_inference), with a dist-info for its version. Debian packages neither: the folder is made once from a git
# snapshot of the public repository (SHAPEPROP_ONNX_IR_GIT, SHAPEPROP_ONNXSCRIPT_GIT, SHAPEPROP_OSI_GIT: a git
# directory; by default the one the machine's snapshots keep) at the commit
# tests/data/real-exports was exported with. Exits 1, saying why, when neither the folder
# nor a snapshot is there: the tests then do not run, and the caller says so.
set -euo pipefail
case ${1:-} in
  onnx_ir) commit=a0cd443 git_dir=${SHAPEPROP_ONNX_IR_GIT:-/work/.mirror/onnx+ir-py/repo} path=src/onnx_ir ;;
  onnxscript) commit=a39c0a5 git_dir=${SHAPEPROP_ONNXSCRIPT_GIT:-/work/.mirror/microsoft+onnxscript/repo} path=onnxscript ;;
  # justinchuby/onnx-shape-inference 0.3.0 (2026-07), the version Olive calls.
  onnx_shape_inference) commit=21e4f9a git_dir=${SHAPEPROP_OSI_GIT:-/work/.mirror/justinchuby+onnx-shape-inference/repo}
    path=src/onnx_shape_inference ;;
  *) echo "usage: $0 onnx_ir|onnxscript|onnx_shape_inference" >&2; exit 2 ;;
esac
name=$1
cache=${SHAPEPROP_CACHE:-/var/cache/shapeprop}
dir=$cache/python-src/$name-$commit
if [ -f "$dir/$name/__init__.py" ]; then
  echo "$dir"
  exit 0
fi
if ! git -C "$git_dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "python-sources: no $name sources in $dir, and no snapshot with $commit at $git_dir" >&2
  exit 1
fi
mkdir -p "$cache/python-src"
work=$(mktemp -d "$cache/python-src/.$name.XXXXXX")
trap 'rm -rf "$work"' EXIT
git -C "$git_dir" archive "$commit" "$path" LICENSE | tar -x -C "$work"
mkdir "$work/out"
mv "$work/$path" "$work/LICENSE" "$work/out/"
# A dist-info with its name and version, so that importlib.metadata finds it (torch's
# exporter checks onnxscript's version).
if [ "$name" = onnxscript ]; then
  version=$(git -C "$git_dir" show "$commit:VERSION")
else
  version=$(sed -nE 's/^__version__ = "([^"]+)".*/\1/p' "$work/out/$name/__init__.py")
fi
mkdir "$work/out/$name-$version.dist-info"
printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' "$name" "$version" >"$work/out/$name-$version.dist-info/METADATA"
chmod -R a+rX "$work/out"
mv "$work/out" "$dir"
echo "$dir"
