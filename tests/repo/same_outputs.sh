#!/usr/bin/env bash
# same_outputs.sh BEFORE AFTER: runs two builds of onnx-infer-shapes over every model of the
# repository (tests/data/corpus, tests/data/real-exports, and the goldens' text models) in
# each mode (annotate, specialize, inline, check), and the exported models (.onnx) also
# through the inline and dce passes alone and a --passes list of several stages, and compares what each writes: the
# output bytes, stderr and the exit status. For a redesign that must change nothing: prints each
# difference (model, mode, what differs) and exits 1 on one, 0 when every run agrees.
# Environment: SAME_OUTPUTS_FILTER, a substring the models' paths must contain.
set -u
before=$1
after=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d /tmp/shapeprop-same.XXXXXX)
trap 'rm -rf "$work"' EXIT

models=()
while IFS= read -r -d '' m; do models+=("$m"); done < <(
  find "$here/tests/data/corpus" "$here/tests/data/real-exports" -name '*.onnx' -print0
  find "$here/tests/golden" -name '*.onnxtxt' -not -path '*/Inputs/*' -print0)

runs=0
differ=0
for m in "${models[@]}"; do
  case "$m" in *"${SAME_OUTPUTS_FILTER:-}"*) ;; *) continue ;; esac
  jobs=("--mode annotate" "--mode specialize" "--mode inline" "--mode check")
  case "$m" in *.onnx) jobs+=("--passes inline" "--passes dce" "--passes specialize,fold,dce,cse,inline,fold,dce") ;; esac
  for job in "${jobs[@]}"; do
    read -r -a args <<<"$job"
    mode=${job#--* }
    out=()
    [ "$mode" = check ] || out=(-o "$work/OUT.onnx")
    for side in before after; do
      tool=$before
      [ "$side" = after ] && tool=$after
      rm -f "$work/OUT.onnx"
      "$tool" "${args[@]}" "$m" "${out[@]/OUT/$side}" -q >/dev/null 2>"$work/$side.err"
      echo $? >"$work/$side.status"
    done
    runs=$((runs + 1))
    what=()
    cmp -s "$work/before.status" "$work/after.status" || what+=("exit $(cat "$work/before.status") -> $(cat "$work/after.status")")
    cmp -s "$work/before.err" "$work/after.err" || what+=(stderr)
    if [ "$mode" != check ]; then
      if [ -e "$work/before.onnx" ] || [ -e "$work/after.onnx" ]; then
        cmp -s "$work/before.onnx" "$work/after.onnx" || what+=(output)
      fi
      rm -f "$work/before.onnx" "$work/after.onnx"
    fi
    if [ ${#what[@]} -gt 0 ]; then
      differ=$((differ + 1))
      echo "differs: ${m#"$here"/} ($job): ${what[*]}"
    fi
  done
done
echo "same_outputs: $runs runs, $differ differ"
[ "$differ" -eq 0 ]
