#!/usr/bin/env bash
# fixed_shape_counts.sh TOOL: remakes fixed-shape-counts.tsv beside this script, the node
# counts of every real export with its symbolic input dims bound (the sizes of
# tests/realexports/static_bindings.json): as exported, through TOOL (onnx-infer-shapes)
# --mode inline --set-dim, and through ONNX Runtime's make_dynamic_shape_fixed followed by
# its graph optimizations (fixed_shape_counts.py, in a Debian sid root with
# python3-onnxruntime made by scripts/sid-root.sh). Stops when a model fails
# tests/realexports/static_shapes.js. Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 TOOL" >&2; exit 2; }
tool=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
bindings=$repo/tests/realexports/static_bindings.json
ours=$(mktemp -d)
trap 'rm -rf "$ours"' EXIT
# The outputs as realexports.static.* makes and checks them (the names the model's inputs carry).
for model in "$here"/*.onnx; do
  node "$repo/tests/realexports/static_shapes.js" "$tool" "$model" "$ours/$(basename "$model")" >/dev/null
done
root=$("$repo/scripts/sid-root.sh" ort python3-onnxruntime python3-onnx python3-numpy)
"$repo/scripts/in-sid-root.sh" "$root" -o "$ours" python3 tests/data/real-exports/fixed_shape_counts.py \
  tests/data/real-exports /tmp/out tests/realexports/static_bindings.json > "$here/fixed-shape-counts.tsv"
echo "wrote $here/fixed-shape-counts.tsv" >&2
