#!/usr/bin/env bash
# Installs the build into a temporary prefix, checks that the installed tool finds the
# installed rules (schemas/), that the installed Python package imports and reads its
# rules (check_install.sh BUILD SOURCE [PYTHON PACKAGE_DIR]), then configures, builds and
# runs a consumer project that finds the library with find_package(shapeprop).
set -euo pipefail
# (grep without -q below: it reads all its input, so that the writer never dies of SIGPIPE
# under pipefail when grep has matched early.)
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
# The shipped rules are installed beside the tool, which finds them there.
"$work/prefix/bin/onnx-infer-shapes" --version | grep -x "shipped rules: $work/prefix/share/shapeprop/schemas" >/dev/null
printf '<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>\ng (float[2] x) => (y) {\n  y = com.microsoft.Gelu (x)\n}\n' >"$work/gelu.onnxtxt"
"$work/prefix/bin/onnx-infer-shapes" --debug-analysis "$work/gelu.onnxtxt" 2>&1 >/dev/null | grep "at schemas/com.microsoft/Gelu.rule" >/dev/null
# The Python package (when built: PYTHON and its install folder under the prefix are given)
# imports from the install, and reads the rules installed beside it.
if [ $# -ge 4 ]; then
  PYTHONPATH="$work/prefix/$4" "$3" - "$work/prefix/$4/shapeprop" "$work/gelu.onnxtxt" <<'PY'
import sys
import shapeprop
package, model = sys.argv[1:]
assert shapeprop.__file__ == package + "/__init__.py", shapeprop.__file__
assert shapeprop._SHIPPED_RULES_FOLDER == package + "/schemas", shapeprop._SHIPPED_RULES_FOLDER
typed, report = shapeprop.infer_shapes(model, return_report=True)
assert [d for d in report.diagnostics if d.severity != "note"] == [], report.diagnostics
assert typed.graph.output[0].type.tensor_type.elem_type == 1
PY
fi
cmake -S "$source_dir" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
