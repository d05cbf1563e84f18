#!/usr/bin/env bash
# annotate_corpus.sh BUILD_DIR CORPUS_DIR [TOOL ARGS...]: onnx-infer-shapes over every real
# model in CORPUS_DIR, annotating (ctest corpus.annotate) or with the given mode
# (corpus.specialize: --mode specialize, corpus.inline: --mode inline). For each model:
#   1. `onnx-infer-shapes MODEL [TOOL ARGS] -o OUT.onnx --verify-full-check` exits 0 (the
#      output passes ONNX's full checker);
#   2. idempotence: running again on OUT.onnx gives the same bytes;
#   3. for models with functions: a run with --debug-analysis accounts for every value of
#      every reached function: it has a FunctionProto.value_info entry or is listed under
#      "no value_info in F for:" with a reason (model_facts.py); the output of that run is
#      the same bytes as OUT.onnx (determinism);
#   4. equivalence: tools/equiv runs MODEL and OUT.onnx on ONNX Runtime on the same
#      seeded inputs (seeds 1,2,3) and compares the outputs; models with symbolic input
#      dims run at two bindings of each (batch, seq, N), models without at their static
#      shapes only (a second binding would repeat the same runs).
# Exceptions:
#   - torch-dynamo/dort_llama_rotary_1_inlined.onnx uses com.microsoft ops without
#     declaring the opset import (a real-world malformed model): it must be rejected with
#     exit 2, one line on stderr naming the problem, and no output file.
#   - the two torch-dynamo/dort_llama_* models skip step 4: their inputs hold tens of
#     millions of elements (float16[11008,4096] weights and more), too much to generate
#     and run several times here.
# Prints one line per model and "N passed, M failed"; exits 1 on any failure.
set -u

if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD_DIR CORPUS_DIR [TOOL ARGS...]" >&2
  exit 2
fi
build_dir=$1
corpus=$2
mode_args=("${@:3}")
here=$(cd "$(dirname "$0")" && pwd)
tool=$build_dir/tools/onnx-infer-shapes
equiv=$here/../../tools/equiv/equiv.js
facts=$here/model_facts.py

for need in "$tool" "$equiv" "$facts"; do
  if [ ! -e "$need" ]; then
    echo "annotate_corpus: missing $need" >&2
    exit 2
  fi
done
for cmd in node python3 cmp timeout; do
  if ! command -v "$cmd" >/dev/null; then
    echo "annotate_corpus: $cmd is not installed" >&2
    exit 2
  fi
done
if [ ! -d "$corpus" ]; then
  echo "annotate_corpus: no corpus at $corpus (it comes with the repository: tests/data/corpus)" >&2
  exit 2
fi

# A hang is a failure too (exit 124), not a stuck ctest.
tool_run() { timeout 120 "$tool" "$@"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

passed=0
failed=0
start=$SECONDS

# Runs one model; prints what failed on stdout (nothing when it passes).
check_model() {
  local model=$1 rel=$2 dir=$3 has_functions=$4 dims=$5
  local out=$dir/out.onnx

  if [ "$rel" = "torch-dynamo/dort_llama_rotary_1_inlined.onnx" ]; then
    tool_run "$model" "${mode_args[@]}" -o "$out" --verify-full-check >"$dir/stdout" 2>"$dir/stderr"
    local status=$?
    [ "$status" -eq 2 ] || echo "exit status $status, expected 2"
    [ "$(wc -l <"$dir/stderr")" -eq 1 ] || { echo "expected one line on stderr:"; cat "$dir/stderr"; }
    grep -q "error: domain 'com.microsoft' is used without an opset import" "$dir/stderr" ||
      { echo "expected the missing com.microsoft opset import diagnostic:"; cat "$dir/stderr"; }
    [ ! -e "$out" ] || echo "an output file was written"
    return
  fi

  # 1. Annotate; the output passes the full checker.
  if ! tool_run "$model" "${mode_args[@]}" -o "$out" --verify-full-check -q 2>"$dir/stderr"; then
    echo "the run failed:"
    cat "$dir/stderr"
    return
  fi

  # 2. A second run changes nothing.
  if ! tool_run "$out" "${mode_args[@]}" -o "$dir/again.onnx" -q 2>"$dir/stderr"; then
    echo "running again on the output failed:"
    cat "$dir/stderr"
  elif ! cmp -s "$out" "$dir/again.onnx"; then
    echo "not idempotent: running again on the output changes it"
  fi

  # 3. Every value of every reached function is accounted for.
  if [ "$has_functions" != no-functions ]; then
    if ! tool_run "$model" "${mode_args[@]}" -o "$dir/debug.onnx" --debug-analysis 2>"$dir/debug.log"; then
      echo "--debug-analysis run failed:"
      cat "$dir/debug.log"
    else
      cmp -s "$out" "$dir/debug.onnx" || echo "not deterministic: the --debug-analysis run wrote other bytes"
      python3 "$facts" check-function-value-info "$dir/debug.onnx" "$dir/debug.log" >"$dir/facts.log" ||
        { echo "function values without value_info or reason:"; cat "$dir/facts.log"; }
    fi
  fi

  # 4. Same outputs on ONNX Runtime.
  case "$rel" in
    torch-dynamo/dort_llama_*) return ;;
  esac
  local binds=()
  if [ -n "$dims" ]; then
    binds=(--bind batch=1,3 --bind seq=2,5 --bind N=2,3)
  fi
  timeout 300 node "$equiv" "$model" "$out" --quiet --seeds 1,2,3 "${binds[@]}" >"$dir/equiv.log" 2>&1 ||
    { echo "not equivalent on ONNX Runtime:"; cat "$dir/equiv.log"; }
}

models=()
while IFS= read -r model; do models+=("$model"); done < <(find -L "$corpus" -name '*.onnx' -type f | LC_ALL=C sort)
if [ ${#models[@]} -eq 0 ]; then
  echo "annotate_corpus: no .onnx files under $corpus" >&2
  exit 2
fi
# One python3 start for the whole corpus: whether each model has functions, and the
# symbolic dims of its inputs ("unreadable" models get every check).
if ! python3 "$facts" survey "${models[@]}" >"$work/survey.tsv"; then
  echo "annotate_corpus: model_facts.py survey failed" >&2
  exit 2
fi

while IFS=$'\t' read -r model has_functions dims; do
  rel=${model#"$corpus"/}
  dir=$work/$(printf '%s' "$rel" | tr '/' '_')
  mkdir -p "$dir"
  t0=$SECONDS
  problems=$(check_model "$model" "$rel" "$dir" "$has_functions" "$dims" </dev/null)
  if [ -z "$problems" ]; then
    passed=$((passed + 1))
    printf 'PASS %-55s %3ds\n' "$rel" $((SECONDS - t0))
  else
    failed=$((failed + 1))
    printf 'FAIL %-55s %3ds\n' "$rel" $((SECONDS - t0))
    printf '%s\n' "$problems" | sed 's/^/     /'
  fi
done <"$work/survey.tsv"

echo "$passed passed, $failed failed ($((SECONDS - start))s)"
[ "$failed" -eq 0 ]
