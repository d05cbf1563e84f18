#!/usr/bin/env bash
# capture.sh PYDEPS: remakes this folder's models and onnxscript-tests.tsv from
# onnxscript's own tests (capture.py), in a Debian sid root (scripts/sid-root.sh
# onnxscript-tests). PYDEPS holds `onnxscript/` and `onnx_ir/` with a dist-info METADATA
# each, as tests/data/real-exports/README.md describes (git archive of the public
# microsoft/onnxscript and onnx/ir-py repositories at the commits of README.md); none of
# it belongs in this repository. Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 PYDEPS" >&2; exit 2; }
pydeps=$(cd "$1" && pwd)
[ -d "$pydeps/onnxscript" ] && [ -d "$pydeps/onnx_ir" ] || { echo "capture.sh: $pydeps lacks onnxscript or onnx_ir" >&2; exit 2; }
root=$("$repo/scripts/sid-root.sh" onnxscript-tests python3-onnx python3-numpy python3-ml-dtypes \
       python3-typing-extensions python3-parameterized python3-onnxruntime python3-packaging python3-sympy python3-colorama)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$pydeps" "$work/pydeps"
mkdir "$work/models"
# The tests of onnxscript's optimizer and of the rules its default rewrite applies
# (onnxscript.rewriter._DEFAULT_REWRITE_RULES).
modules=(onnxscript.optimizer._constant_folding_test onnxscript.optimizer._function_folding_test
  onnxscript.optimizer._optimizer_test)
for rule in _no_op _broadcast_to_matmul _cast_constant_of_shape _cast_constant_of_shape_extended _collapse_slices \
            _materialize_reshape_shape _min_max_to_clip _fuse_relus_clips _basic_rules _redundant_scatter_nd \
            _redundant_scatter_nd_extended _fuse_pad_into_conv _fuse_batchnorm _remove_optional_bias; do
  modules+=("onnxscript.rewriter.rules.common.${rule}_test")
done
"$repo/scripts/in-sid-root.sh" "$root" -o "$work" env PYTHONPATH=/tmp/out/pydeps \
  python3 tests/data/onnxscript-tests/capture.py /tmp/out/pydeps /tmp/out/models "${modules[@]}" \
  >"$work/counts.tsv" 2>"$work/capture.log"
rm -f "$here"/*.onnx
cp "$work"/models/*.onnx "$here/"
cp "$work/counts.tsv" "$here/onnxscript-tests.tsv"
echo "capture.sh: $(($(wc -l <"$here/onnxscript-tests.tsv") - 1)) models" >&2
