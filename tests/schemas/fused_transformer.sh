#!/usr/bin/env bash
# The acceptance test of schemas/: the corpus's transformer (transformer_L16) with its
# blocks as the fusion passes leave them (tools/gen-fused-transformer: 14 of the 15 ops
# the shipped rules describe; GroupNorm is a diffusion op ONNX Runtime's CPU build cannot
# run) is fully typed by annotate mode, passes ONNX's full checker, and every annotated
# type is the one ONNX Runtime produces at two bindings of batch and seq.
#   fused_transformer.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$build/tools/gen-fused-transformer" -o "$work/fused.onnx"
"$build/tools/onnx-infer-shapes" --no-infer "$work/fused.onnx" -o "$work/fused.onnxtxt" 2>/dev/null
for op in Attention BiasGelu EmbedLayerNormalization FastGelu FusedMatMul Gelu GroupQueryAttention MatMulNBits \
          MultiHeadAttention QuickGelu RotaryEmbedding SkipLayerNormalization SkipSimplifiedLayerNormalization; do
  grep -qE "= com\.microsoft\.$op (<|\()" "$work/fused.onnxtxt" || { echo "the fused model has no com.microsoft.$op" >&2; exit 1; }
done
grep -qE "= SimplifiedLayerNormalization (<|\()" "$work/fused.onnxtxt" || { echo "the fused model has no SimplifiedLayerNormalization" >&2; exit 1; }
"$build/tools/onnx-infer-shapes" --verify-full-check --verify-idempotent "$work/fused.onnx" -o "$work/annotated.onnx" 2>"$work/err"
cat "$work/err"
if grep -q ": warning: " "$work/err"; then echo "annotating the fused model warned" >&2; exit 1; fi
node "$src/tools/equiv/ort_types.js" "$work/annotated.onnx" --bind batch=1,3 --bind seq=2,5 --require-full
