#!/usr/bin/env bash
# Every registered pass, run alone (--passes NAME) on every model under the folders given,
# ends with exit 0 and an output that prints as text and parses back unchanged
# (--verify-roundtrip). Models that validation refuses in every mode (the corpus's
# dort_llama_rotary ones) are left out, as in corpus.annotate.
#   each_pass.sh BUILD_DIR FOLDER...
set -euo pipefail
build=$1; shift
tool=$build/tools/onnx-infer-shapes
mapfile -t passes < <("$tool" --list-passes | awk '{print $1}')
(( ${#passes[@]} >= 12 )) || { echo "each_pass: --list-passes lists ${#passes[@]} passes" >&2; exit 1; }
mapfile -t models < <(find "$@" -name '*.onnx' ! -name '*dort_llama_rotary*' | sort)
(( ${#models[@]} > 0 )) || { echo "each_pass: no models under $*" >&2; exit 1; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
runs=0 failed=0
for model in "${models[@]}"; do
  for pass in "${passes[@]}"; do
    runs=$((runs + 1))
    if ! "$tool" -q --passes "$pass" --verify-roundtrip "$model" -o "$out/m.onnx" 2>"$out/err"; then
      failed=$((failed + 1))
      echo "each_pass: --passes $pass failed on $model:" >&2
      head -5 "$out/err" >&2
    fi
  done
done
echo "each_pass: ${#passes[@]} passes x ${#models[@]} models: $runs runs, $failed failed"
(( failed == 0 ))
