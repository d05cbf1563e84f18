#!/usr/bin/env bash
# check_corpus.sh BUILD_DIR CORPUS_DIR: `onnx-infer-shapes --mode check` over every model of
# CORPUS_DIR (ctest corpus.check). For each model:
#   1. the check exits 0 and writes nothing on stdout;
#   2. the model's bytes are the same afterwards;
#   3. the model annotated by onnx-infer-shapes (graph and function value_info, the join
#      over each function's contexts) passes the check too: every type shapeprop writes
#      holds in every context.
# Exceptions, each of which must get exactly its diagnostic and exit 1:
#   - torch-dynamo/dort_llama_rotary_1_inlined.onnx uses com.microsoft ops without an
#     opset import (see annotate_corpus.sh);
#   - torch-dynamo/stft_inlined_batch_1.onnx declares its Loop body's condition output a
#     scalar bool, but the body computes bool[1] in every iteration (the loop counter
#     starts as int64[1] {0}, and Less keeps that shape). ONNX's checker cannot see it:
#     its Loop inference drops the shapes of loop-carried values. The annotated model
#     (whose declaration onnx-infer-shapes corrects) passes.
# Prints one line per model and "N passed, M failed"; exits 1 on any failure.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR CORPUS_DIR" >&2
  exit 2
fi
tool=$1/tools/onnx-infer-shapes
corpus=$2
[ -x "$tool" ] || { echo "check_corpus: missing $tool" >&2; exit 2; }
[ -d "$corpus" ] || { echo "check_corpus: no corpus at $corpus (it comes with the repository: tests/data/corpus)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0

check_one() {
  local model=$1 rel=$2
  local before after status
  before=$(sha256sum <"$model")
  timeout 120 "$tool" --mode check "$model" >"$work/stdout" 2>"$work/stderr"
  status=$?
  after=$(sha256sum <"$model")
  [ "$before" = "$after" ] || echo "the model's bytes changed"
  [ ! -s "$work/stdout" ] || echo "something was written on stdout"
  local expected=
  case "$rel" in
    torch-dynamo/dort_llama_rotary_1_inlined.onnx)
      expected="error: domain 'com.microsoft' is used without an opset import" ;;
    torch-dynamo/stft_inlined_batch_1.onnx)
      expected="error: 'cond_out__5' is declared bool (subgraph output) but proven bool[1]: rank 0, proven 1 [at graph 'main_graph' > node 'n9__5' (Loop) > body > node 'n15__5' (Identity)]" ;;
  esac
  if [ -n "$expected" ]; then
    [ "$status" -eq 1 ] || echo "exit status $status, expected 1"
    [ "$(grep -c ': error: ' "$work/stderr")" -eq 1 ] && grep -qF "$expected" "$work/stderr" ||
      { echo "expected exactly one error, '$expected':"; cat "$work/stderr"; }
  else
    [ "$status" -eq 0 ] || { echo "the check of the model failed ($status):"; cat "$work/stderr"; return; }
  fi
  [ "$rel" != torch-dynamo/dort_llama_rotary_1_inlined.onnx ] || return
  if ! timeout 120 "$tool" "$model" -q -o "$work/annotated.onnx" 2>"$work/stderr"; then
    echo "annotating failed:"
    cat "$work/stderr"
    return
  fi
  timeout 120 "$tool" --mode check -q "$work/annotated.onnx" >/dev/null 2>"$work/stderr" ||
    { echo "the check of the annotated model failed:"; cat "$work/stderr"; }
}

while IFS= read -r model; do
  rel=${model#"$corpus"/}
  problems=$(check_one "$model" "$rel" </dev/null)
  if [ -z "$problems" ]; then
    passed=$((passed + 1))
    printf 'PASS %s\n' "$rel"
  else
    failed=$((failed + 1))
    printf 'FAIL %s\n' "$rel"
    printf '%s\n' "$problems" | sed 's/^/     /'
  fi
done < <(find -L "$corpus" -name '*.onnx' -type f | LC_ALL=C sort)

echo "$passed passed, $failed failed"
[ "$passed" -gt 0 ] && [ "$failed" -eq 0 ]
