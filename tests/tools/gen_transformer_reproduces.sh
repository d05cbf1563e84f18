#!/usr/bin/env bash
# gen_transformer_reproduces.sh BUILD_DIR CORPUS_DIR: gen-transformer, from its default
# template (the corpus's transformer_L16), writes transformer_L2 and transformer_L16 node
# for node, value_info and weight names included (weight values aside: new layers copy
# layer 1's); and writes valid models at L = 1 and L = 40 (ONNX's full checker).
set -u
build=${1:?usage: gen_transformer_reproduces.sh BUILD_DIR CORPUS_DIR}
corpus=${2:?usage: gen_transformer_reproduces.sh BUILD_DIR CORPUS_DIR}
gen=$build/tools/gen-transformer
tool=$build/tools/onnx-infer-shapes
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
# The printed model without tensor data.
shape_of() { "$tool" "$1" --no-infer -q | sed -E 's/ = \{[^}]*\}//g'; }
for L in 2 16; do
  "$gen" --layers $L -o "$work/L$L.onnx" || { echo "FAIL: gen-transformer --layers $L"; status=1; continue; }
  shape_of "$work/L$L.onnx" > "$work/gen.txt"
  shape_of "$corpus/torchlib-2024-03/models/transformer_L$L.onnx" > "$work/corpus.txt"
  if [ "$(grep -c aten_ "$work/corpus.txt")" -lt 10 ]; then
    echo "FAIL: transformer_L$L did not print"; status=1
  elif diff "$work/gen.txt" "$work/corpus.txt" > "$work/diff"; then
    echo "ok: --layers $L is transformer_L$L"
  else
    echo "FAIL: --layers $L differs from transformer_L$L:"; head -c 2000 "$work/diff"; echo; status=1
  fi
done
for L in 1 40; do
  if "$gen" --layers $L -o "$work/L$L.onnx" && "$tool" "$work/L$L.onnx" --verify-full-check -q -o "$work/out$L.onnx"; then
    echo "ok: --layers $L passes the full checker"
  else
    echo "FAIL: --layers $L"; status=1
  fi
done
if "$gen" --layers 0 -o "$work/bad.onnx" 2>/dev/null || [ -e "$work/bad.onnx" ]; then
  echo "FAIL: --layers 0 accepted"; status=1
fi
exit $status
