#!/usr/bin/env bash
# Installs the build into a temporary prefix, checks that the installed tool finds the
# installed rules (schemas/), then configures, builds and runs a consumer project that
# finds the library with find_package(shapeprop).
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
# The shipped rules are installed beside the tool, which finds them there.
"$work/prefix/bin/onnx-infer-shapes" --version | grep -qx "shipped rules: $work/prefix/share/shapeprop/schemas"
printf '<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>\ng (float[2] x) => (y) {\n  y = com.microsoft.Gelu (x)\n}\n' >"$work/gelu.onnxtxt"
"$work/prefix/bin/onnx-infer-shapes" --debug-analysis "$work/gelu.onnxtxt" 2>&1 >/dev/null | grep -q "at schemas/com.microsoft/Gelu.rule"
cmake -S "$source_dir" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
