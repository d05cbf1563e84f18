#!/usr/bin/env bash
# planted_pass.sh SOURCE_DIR WORK_DIR BUILD_SUBDIR [CMAKE_ARGS...]: a new pass takes its own
# file and one line of passes.def, nothing else. In a copy of the source tree (WORK_DIR/tree,
# its build in BUILD_SUBDIR under it, where the source's build is, so that ccache serves what
# did not change) it plants tests/repo/planted_pass/planted.cc as src/transform/planted.cc
# and one SHAPEPROP_BODY_PASS line, checks that these are the only differences from the
# source, builds onnx-infer-shapes and runs the pass (--list-passes lists it, --passes runs
# it). Then the other side: without the file the build fails to link, naming the function;
# listed with SHAPEPROP_PASS (no function) body_pipeline.cc fails to compile, naming the pass.
set -euo pipefail
src=${1:?usage: planted_pass.sh SOURCE_DIR WORK_DIR BUILD_SUBDIR [CMAKE_ARGS...]}
work=${2:?}
sub=${3:?}
shift 3
tree=$work/tree
build=$tree/$sub
def=include/transform/shapeprop/passes.def
line='SHAPEPROP_BODY_PASS(Planted, "planted", OptIn, plant_nothing, "planted.cc", "a pass planted by a test")'
fail() { echo "FAIL: $*"; exit 1; }

mkdir -p "$tree"
# A fresh copy each run (ccache serves the objects of files that did not change).
for d in cmake src include tools schemas; do
  rm -rf "${tree:?}/$d"
  cp -a "$src/$d" "$tree/$d"
done
cp -p "$src/CMakeLists.txt" "$tree/"
cp -p "$src/tests/repo/planted_pass/planted.cc" "$tree/src/transform/planted.cc"
# The line goes before cse's (the position within the list is the pipeline's order).
awk -v line="$line" '/^SHAPEPROP_BODY_PASS\(Cse,/ { print line } { print }' "$src/$def" >"$tree/$def.new"
cmp -s "$tree/$def.new" "$tree/$def" && fail "passes.def has no cse line to plant before"
mv "$tree/$def.new" "$tree/$def"

# What the planted pass touched: its file and one line of the registry.
changed=$(cd "$tree" && for d in cmake src include tools schemas; do diff -rq "$src/$d" "$d" || true; done)
echo "$changed"
[ "$(grep -c . <<<"$changed")" -eq 2 ] || fail "the plant touched more than its file and passes.def"
grep -q "Only in src/transform: planted.cc" <<<"$changed" || fail "planted.cc is not the new file"
grep -q "passes.def.* differ" <<<"$changed" || fail "passes.def is not the changed file"
[ "$(diff "$src/$def" "$tree/$def" | grep -c '^>')" -eq 1 ] || fail "passes.def gained more than one line"

cmake -S "$tree" -B "$build" -DSHAPEPROP_BUILD_TESTS=OFF -DSHAPEPROP_BUILD_PYTHON=OFF \
  -DSHAPEPROP_BUILD_BENCHMARKS=OFF "$@" >"$work/configure.log" || { cat "$work/configure.log"; fail "configure"; }
cmake --build "$build" --target onnx-infer-shapes >"$work/build.log" 2>&1 || { tail -40 "$work/build.log"; fail "build"; }
tool=$build/tools/onnx-infer-shapes
"$tool" --list-passes | grep -q "^planted  *\[opt-in\] a pass planted by a test$" || fail "--list-passes does not list it"
model=$src/examples/torchlib_calls.onnxtxt
"$tool" "$model" --passes planted -o "$work/out.onnx" 2>"$work/run.err" || { cat "$work/run.err"; fail "--passes planted"; }
grep -q "^planted pass ran on [0-9]* nodes$" "$work/run.err" || { cat "$work/run.err"; fail "the pass did not run"; }
echo "the planted pass builds, is listed and runs"

# Without its file: the link fails, naming the function.
rm "$tree/src/transform/planted.cc"
if cmake --build "$build" --target onnx-infer-shapes >"$work/build.log" 2>&1; then fail "built without planted.cc"; fi
grep -q "undefined reference to .*plant_nothing" "$work/build.log" || { tail -20 "$work/build.log"; fail "no link error naming plant_nothing"; }
echo "without its file the build fails to link: $(grep -m1 -o "undefined reference to .*plant_nothing.*" "$work/build.log")"

# Listed as a body pass without a function: body_pipeline.cc fails to compile, naming it.
sed -i "s|^SHAPEPROP_BODY_PASS(Planted, \"planted\", OptIn, plant_nothing, |SHAPEPROP_PASS(Planted, \"planted\", OptIn, |" "$tree/$def"
# (With Ninja the one object; otherwise the transform library, which compiles it among others.)
object=shapeprop_transform
if [ -f "$build/build.ninja" ]; then
  object=$(cd "$build" && ninja -t targets all | grep -o '^[^:]*transform/body_pipeline\.cc\.o' | head -1)
  [ -n "$object" ] || fail "no object for body_pipeline.cc"
fi
if cmake --build "$build" --target "$object" >"$work/build.log" 2>&1; then fail "body_pipeline.cc compiled a body pass without a function"; fi
grep -q "the body pass 'planted' names no function" "$work/build.log" || { tail -20 "$work/build.log"; fail "no static_assert naming the pass"; }
echo "a body pass without a function fails to compile: the body pass 'planted' names no function"
