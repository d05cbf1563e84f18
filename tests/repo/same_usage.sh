#!/usr/bin/env bash
# same_usage.sh BEFORE AFTER: runs two builds of onnx-infer-shapes on command lines that
# end in a usage error, print and exit, or run with each option on a small model, and
# compares what each writes: stdout, stderr, the exit status and the --report (its times
# left out). For a change of the option parser that must change nothing; prints each
# difference and exits 1 on one. (When several options conflict, the one named is the
# first in the option table, shapeprop/options.def, since it holds the rules.)
set -u
before=$1; after=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
m=$here/examples/torchlib_calls.onnxtxt
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
lines=(
"" "--help" "-h" "--version" "--list-passes" "--help=x" "--strict=1" "-o" "--output" "-o=x $m" "--frobnicate" "-" "a b" "''"
"--mode" "--mode x $m" "--mode=check $m -o x" "--mode check $m --emit text" "--mode check $m --override x"
"--mode check $m --inline all" "--mode check $m --keep a::b" "--mode check $m --keep=" "--mode check $m --expand-ops Attention"
"--mode check $m --target-opset 18" "--mode check $m --naming copies"
"--mode check $m --passes fold" "--mode check $m --print-after fold" "--mode check $m --print-shapes" "--mode check $m --no-infer"
"--mode check $m --keep-ir-version" "--mode check $m --debug-analysis" "--mode check $m --verify-roundtrip"
"--mode check $m --verify-idempotent" "--mode check $m --verify-full-check" "--mode check $m --rename-dim a=b"
"--mode check $m --rename-dim=" "--mode check $m --name-dims" "--mode check $m -o - " "--mode check $m --emit text -o x"
"$m --keep a::b" "$m --keep=" "$m --naming overload" "$m --print-after fold"
"$m --keep a::b --naming copies" "$m --print-shapes --no-infer" "$m --print-shapes -o -" "$m --print-shapes --emit text"
"$m --print-shapes --emit text -o x.onnx --no-infer" "$m --passes fold --print-after dce" "$m --passes fold,dce --print-after dce --mode annotate -o /dev/null"
"$m --passes" "$m --passes=" "$m --passes nope" "$m --print-after fold,dce" "$m --print-after nope" "$m --inline x" "$m --inline small:x"
"$m --inline smallx" "$m --inline small:" "$m --inline small:99999999999999999999" "$m --emit yaml" "$m --naming overloads"
"$m --keep aten" "$m --expand-ops ''" "$m --expand-ops a.b" "$m --target-opset 0" "$m --target-opset 99" "$m --report ''"
"$m --report=" "$m --set-dim ''" "$m --set-dim a" "$m --input-shape x" "$m --dim-range a=3..1" "$m --rename-dim a"
"$m --max-input-size 12X" "$m --max-input-size=1K -q" "$m --max-subgraph-depth 129" "$m --max-fifo-wait 86401" "$m --max-dim-terms 0"
"$m --max-inline-growth" "$m --mode inline -q --inline small" "$m --mode specialize --inline small:3 -q --report $work/r.json"
"$m --mode inline --naming overload -q" "$m -q --max-elements 5" "$m --emit binary -q" "$m --emit text -q --keep-ir-version"
"$m --print-shapes -q" "$m --print-shapes -q -o $work/x.onnx" "$m --mode annotate --passes fold -q" "$m --expand-ops all-functions -q"
"$m --target-opset 18 -q" "$m -q --report $m" "$m -o $m" "$m --mode check -q" "$m --mode check --strict --dim-range N=1..4 -q"
"$m --no-infer -q" "$m --debug-analysis -q" "$m --verify-roundtrip --verify-idempotent --verify-full-check -q --mode inline"
)
differ=0
for l in "${lines[@]}"; do
  eval "args=($l)"
  for side in before after; do
    tool=$before; [ $side = after ] && tool=$after
    (cd "$work" && "$tool" "${args[@]}" >"$work/$side.out" 2>"$work/$side.err"; echo $? >"$work/$side.status")
    sed -i -e "s|$work|WORK|g" -e '/^shipped rules: /d' "$work/$side.out" "$work/$side.err"
    [ -e "$work/r.json" ] && { sed -E 's/"seconds": [0-9.e-]+/"seconds": T/g; s/"(wall|cpu|user|system)[a-z_]*": [0-9.e-]+/"\1": T/g' "$work/r.json" >"$work/$side.json"; rm -f "$work/r.json"; }
  done
  for f in out err status json; do
    [ -e "$work/before.$f" ] || continue
    cmp -s "$work/before.$f" "$work/after.$f" || { echo "differs ($f): $l"; diff "$work/before.$f" "$work/after.$f" | head -5; differ=$((differ+1)); }
  done
  rm -f "$work"/before.* "$work"/after.*
done
echo "same_usage: ${#lines[@]} command lines, $differ differ"
[ $differ -eq 0 ]
