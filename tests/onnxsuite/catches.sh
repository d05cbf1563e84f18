#!/usr/bin/env bash
# catches.sh PYTHON TESTS_DIR LIST: the suite's list is held to what runs. On ONNX's
# symbolic_shape_test.py alone, a list that lacks a test that fails (test_duplicate_symbolic_shape)
# and names one that passes (test_unknown_shape) must fail the run, saying both; the list
# LIST as it is, restricted to that file, must pass it.
set -euo pipefail
python=$1 tests=$2 list=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep '^symbolic_shape_test.py::' "$list" >"$work/right.txt"
grep -v 'test_duplicate_symbolic_shape' "$work/right.txt" >"$work/wrong.txt" || true
echo 'symbolic_shape_test.py::TestSymbolicShape::test_unknown_shape  planted: this test passes' >>"$work/wrong.txt"
run() { (cd "$tests" && ONNXSUITE_EXPECTED=$1 "$python" -m pytest -q -p no:cacheprovider -p onnxsuite_plugin \
          --basetemp="$work/tmp" symbolic_shape_test.py 2>&1); }
run "$work/right.txt" >"$work/right.out" || { cat "$work/right.out"; echo "catches: the list as it is fails the run" >&2; exit 1; }
if run "$work/wrong.txt" >"$work/wrong.out"; then
  cat "$work/wrong.out"
  echo "catches: a wrong list passed the run" >&2
  exit 1
fi
grep -q 'fails, and is not listed: symbolic_shape_test.py::TestSymbolicShape::test_duplicate_symbolic_shape' "$work/wrong.out" &&
  grep -q 'passes, and is listed: symbolic_shape_test.py::TestSymbolicShape::test_unknown_shape' "$work/wrong.out" ||
  { cat "$work/wrong.out"; echo "catches: the run does not name both" >&2; exit 1; }
echo "catches: an unlisted failure and a listed pass fail the run"
