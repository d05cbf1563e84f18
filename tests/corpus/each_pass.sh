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
# One run per (model, pass), as many at a time as the machine has cores; a run that fails
# leaves its stderr in $out/failed.
run_one() {  # run_one TOOL OUT MODEL PASS
  local tool=$1 out=$2 model=$3 pass=$4 tmp
  tmp=$(mktemp -d -p "$out")
  if ! "$tool" -q --passes "$pass" --verify-roundtrip "$model" -o "$tmp/m.onnx" 2>"$tmp/err"; then
    { echo "each_pass: --passes $pass failed on $model:"; head -5 "$tmp/err"; } > "$out/failed.${tmp##*/}"
  fi
  rm -rf "$tmp"
}
export -f run_one
for model in "${models[@]}"; do
  for pass in "${passes[@]}"; do printf '%s\0%s\0' "$model" "$pass"; done
done | xargs -0 -n 2 -P "$(nproc)" bash -c 'run_one "$0" "$1" "$2" "$3"' "$tool" "$out"
runs=$(( ${#passes[@]} * ${#models[@]} ))
failed=$(find "$out" -maxdepth 1 -name 'failed.*' | wc -l)
(( failed == 0 )) || cat "$out"/failed.* >&2
echo "each_pass: ${#passes[@]} passes x ${#models[@]} models: $runs runs, $failed failed"
(( failed == 0 ))
