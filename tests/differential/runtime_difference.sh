#!/usr/bin/env bash
# runtime_difference.sh TOOL EQUIV_JS PYTHON MODEL: the outputs of `--mode inline` on MODEL
# (tests/data/numerics/llama_forward_dort_torch24.onnx) against MODEL's, on ONNX Runtime:
#   1. with its graph optimizations, within float32's tolerance (1e-4 relative) at seeds
#      1,2 on inputs in [-1,1] and in [-3,3] (every input dim is static: the input range
#      is the second axis); where they differ there, only with the optimizations (equiv.js
#      says "differ only with ONNX Runtime's graph optimizations"), which is asserted for
#      [-3,3], the range where ONNX Runtime's fusion of the inlined graph's Div into a
#      FusedMatMul takes the outputs past the tolerance;
#   2. without them, bit for bit (rtol 0, atol 0) at the same runs: the two graphs compute
#      the same arithmetic;
#   3. in float64 (tools/equiv/to_float64.py), bit for bit without the optimizations, and
#      with them different only with them: the fusion's alpha is a float32 attribute, so
#      ONNX Runtime computes the scale in float32 even for a double graph.
set -u
if [ $# -ne 4 ]; then
  echo "usage: $0 TOOL EQUIV_JS PYTHON MODEL" >&2
  exit 2
fi
tool=$1 equiv=$2 python=$3 model=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

"$tool" "$model" --mode inline -q -o "$work/inline.onnx" || { echo "FAIL: --mode inline"; exit 1; }

# compare NAME A B ARGS...: equiv.js's verdict and lines, kept in $work/NAME.log.
compare() {
  local name=$1 a=$2 b=$3
  shift 3
  node "$equiv" "$a" "$b" --seeds 1,2 "$@" >"$work/$name.log" 2>&1
}
for range in -1,1 -3,3; do
  compare "opt$range" "$model" "$work/inline.onnx" --float-range "$range" ||
    fail "optimized, inputs in [$range]: $(tail -1 "$work/opt$range.log")"
  compare "exact$range" "$model" "$work/inline.onnx" --float-range "$range" --no-optimize --rtol 0 --atol 0 ||
    fail "not bit for bit without the optimizations, inputs in [$range]: $(tail -1 "$work/exact$range.log")"
done
grep -q "^equiv: OK .*: 2 runs agree (2 only without ONNX Runtime's graph optimizations)$" "$work/opt-3,3.log" ||
  fail "inputs in [-3,3]: expected both runs to differ only with the optimizations: $(tail -1 "$work/opt-3,3.log")"

"$python" "$(dirname "$equiv")/to_float64.py" "$model" "$work/model64.onnx" &&
  "$python" "$(dirname "$equiv")/to_float64.py" "$work/inline.onnx" "$work/inline64.onnx" ||
  { echo "FAIL: to_float64.py"; exit 1; }
compare exact64 "$work/model64.onnx" "$work/inline64.onnx" --float-range -3,3 --no-optimize --rtol 0 --atol 0 ||
  fail "float64, not bit for bit without the optimizations: $(tail -1 "$work/exact64.log")"
compare opt64 "$work/model64.onnx" "$work/inline64.onnx" --float-range -3,3
grep -q "^equiv: OK .*: 2 runs agree (2 only without ONNX Runtime's graph optimizations)$" "$work/opt64.log" ||
  fail "float64 with the optimizations: expected both runs to differ only with them: $(tail -1 "$work/opt64.log")"

[ "$failed" -eq 0 ] && echo "PASS: $(basename "$model"): --mode inline computes what the model computes; ONNX Runtime's optimizer alone tells them apart"
exit "$failed"
