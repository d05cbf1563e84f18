#!/usr/bin/env bash
# measure.sh ONNXSLIM_SRC WORK_DIR MODEL...: OnnxSlim's node counts on MODELs (files of this
# clone), as the TSV on stdout that onnxslim-*.tsv holds: model, nodes, valid.
#
# ONNXSLIM_SRC holds OnnxSlim's `onnxslim/` package (`git archive` of the public
# inisis/OnnxSlim repository) and an `onnxslim-VERSION.dist-info/METADATA` naming its
# version (it reads it through importlib.metadata); none of it belongs in this repository.
# measure.py runs OnnxSlim with its defaults in a Debian sid root (scripts/sid-root.sh
# onnxslim: python3-onnx, python3-sympy, python3-packaging, python3-colorama,
# python3-ml-dtypes, python3-onnxruntime), writing each output into WORK_DIR and
# checking it with ONNX's full checker; then tools/equiv/equiv.js runs each output that
# passes beside its input on ONNX Runtime (seeds 1, 2; the bindings of
# tests/data/real-exports/runs.json, other dims 2). `valid` is "valid" when both hold, else
# what failed. Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
[ $# -ge 3 ] || { echo "usage: $0 ONNXSLIM_SRC WORK_DIR MODEL..." >&2; exit 2; }
src=$(cd "$1" && pwd)
work=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2
[ -d "$src/onnxslim" ] || { echo "measure.sh: $src has no onnxslim package" >&2; exit 2; }

root=$("$repo/scripts/sid-root.sh" onnxslim python3-onnx python3-sympy python3-packaging python3-colorama \
       python3-ml-dtypes python3-numpy python3-onnxruntime)
rm -rf "$work/pydeps" "$work/slimmed"
mkdir -p "$work/slimmed"
cp -r "$src" "$work/pydeps"
rel=()
for m in "$@"; do rel+=("$(realpath --relative-to="$repo" "$m")"); done
"$repo/scripts/in-sid-root.sh" "$root" -o "$work" env PYTHONPATH=/tmp/out/pydeps \
  python3 tests/data/onnxslim/measure.py /tmp/out/slimmed "${rel[@]}" >"$work/counts.tsv" 2>"$work/measure.log"

bind=(--bind batch=3,2 --bind seq=5,13 --bind dec_seq=4,7 --bind height=37,48 --bind width=53,40
      --bind samples=480,731 --bind k=2,4)
printf 'model\tnodes\tvalid\n'
# OnnxSlim's own lines (ONNX Runtime's warnings) are not rows.
grep -P '^[^\t*]+\t(-|[0-9]+)\t' "$work/counts.tsv" | while IFS=$'\t' read -r name nodes check; do
  model=
  for m in "$@"; do [ "$(basename "$m" .onnx)" = "$name" ] && model=$m; done
  valid=$check
  if [ "$check" = ok ]; then
    ints=0,4
    [ "${name%%.*}" = bert ] && ints=0,2
    # A model runs.json binds otherwise (a size past which it fails) runs at those sizes.
    model_bind=("${bind[@]}")
    own=$(python3 -c 'import json, sys
m = json.load(open(sys.argv[1]))["models"].get(sys.argv[2].split(".")[0], {})
print(" ".join(f"--bind {k}={v[0]},{v[1]}" for k, v in m.get("bind", {}).items()))' "$repo/tests/data/real-exports/runs.json" "$name")
    [ -z "$own" ] || read -r -a model_bind <<<"$own"
    if node "$repo/tools/equiv/equiv.js" "$model" "$work/slimmed/$name.onnx" --quiet --seeds 1,2 "${model_bind[@]}" \
         --int-range "$ints" >"$work/$name.equiv" 2>&1; then
      valid=valid
    else
      valid="not ONNX Runtime's outputs: $(tail -1 "$work/$name.equiv" | cut -c1-160)"
    fi
  fi
  printf '%s\t%s\t%s\n' "$name" "$nodes" "$valid"
done
