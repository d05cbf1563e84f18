#!/usr/bin/env bash
# static_runtime.sh TOOL: onnx-infer-shapes built with SHAPEPROP_STATIC_RUNTIME
# (tools/CMakeLists.txt) carries libstdc++, libgcc and jemalloc from their archives: none of
# them among the shared libraries it needs, and it runs (a model in, the model out).
set -euo pipefail
tool=${1:?usage: static_runtime.sh TOOL}
needed=$(readelf -d "$tool" | grep -F '(NEEDED)' || true)
if grep -Eq 'libstdc\+\+|libgcc_s|libjemalloc' <<<"$needed"; then
  echo "FAIL: $tool needs a shared C++ runtime or allocator:"; echo "$needed"; exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf '<ir_version: 8, opset_import: ["" : 18]>\ng (float[N,3] x) => (y) {\n  y = Relu (x)\n}\n' > "$dir/m.onnxtxt"
timeout 60 "$tool" -q "$dir/m.onnxtxt" -o "$dir/out.onnxtxt"
grep -q 'float\[N,3\] y' "$dir/out.onnxtxt" || { echo "FAIL: the model written is not annotated:"; cat "$dir/out.onnxtxt"; exit 1; }
echo "$(basename "$tool"): libstdc++, libgcc and jemalloc linked in; it runs"
