#!/usr/bin/env bash
# configure_checks.sh onnx-lite SOURCE_DIR ONNX_INCLUDE_DIR PROTOC
# configure_checks.sh python SOURCE_DIR
# The configure.* ctests (tests/configure/CMakeLists.txt): each configures the project at
# SOURCE_DIR in a temporary build folder (no build) and checks what configuring says.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 onnx-lite|python SOURCE_DIR [ONNX_INCLUDE_DIR PROTOC]" >&2; exit 2; }
what=$1 src=$2
work=$(mktemp -d /tmp/shapeprop-configure.XXXXXX)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# configure NAME ARGS...: configures the project into $work/NAME without tests, benchmarks
# or ccache; its output goes to $work/NAME.log, its status to $status.
configure() {
  local name=$1
  shift
  status=0
  cmake -S "$src" -B "$work/$name" -G Ninja -DSHAPEPROP_BUILD_TESTS=OFF -DSHAPEPROP_BUILD_BENCHMARKS=OFF \
    -DSHAPEPROP_CCACHE=OFF "$@" >"$work/$name.log" 2>&1 || status=$?
}
# expect NAME TEXT: the log of configure NAME holds TEXT (fixed string; CMake wraps a
# warning's lines, so both are compared with their white space runs made one space);
# expect_not likewise.
said() { tr -s ' \n' '  ' <"$work/$1.log" | grep -qF -- "$2"; }
expect() { said "$1" "$2" || { fail "$1: configuring did not say '$2'"; sed 's/^/  | /' "$work/$1.log" | tail -20; }; }
expect_not() { ! said "$1" "$2" || fail "$1: configuring said '$2'"; }

case $what in
  onnx-lite)
    [ $# -eq 4 ] || { echo "usage: $0 onnx-lite SOURCE_DIR ONNX_INCLUDE_DIR PROTOC" >&2; exit 2; }
    include=$3 protoc=$4
    # fake KIND DEFINITIONS: an ONNX package (lib/cmake/ONNX) whose ONNX::onnx is the linked
    # ONNX's onnx_pb.h with onnx-ml.proto generated for KIND (lite or full), and whose interface
    # definitions are DEFINITIONS; a header-only INTERFACE target, enough to configure.
    fake() {
      local dir=$work/onnx-$1-$3
      mkdir -p "$dir/include/onnx" "$dir/lib/cmake/ONNX"
      cp "$include/onnx/onnx_pb.h" "$dir/include/onnx/"
      sed '/^[[:space:]]*option[[:space:]]*optimize_for/d' "$include/onnx/onnx-ml.proto" >"$dir/include/onnx/onnx-ml.proto"
      if [ "$1" = lite ]; then echo 'option optimize_for = LITE_RUNTIME;' >>"$dir/include/onnx/onnx-ml.proto"; fi
      "$protoc" -I "$dir/include" --cpp_out "$dir/include" "$dir/include/onnx/onnx-ml.proto"
      cat >"$dir/lib/cmake/ONNX/ONNXConfig.cmake" <<CM
add_library(ONNX::onnx INTERFACE IMPORTED)
set_target_properties(ONNX::onnx PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "\${CMAKE_CURRENT_LIST_DIR}/../../../include"
  INTERFACE_COMPILE_DEFINITIONS "$2")
CM
      cat >"$dir/lib/cmake/ONNX/ONNXConfigVersion.cmake" <<'CM'
set(PACKAGE_VERSION 1.20.0)
set(PACKAGE_VERSION_COMPATIBLE TRUE)
CM
      echo "$dir/lib/cmake/ONNX"
    }
    plain="ONNX_ML=1;ONNX_NAMESPACE=onnx"
    configure lite-undeclared -DONNX_DIR="$(fake lite "$plain" undeclared)" -DSHAPEPROP_BUILD_PYTHON=OFF
    [ $status -eq 0 ] || fail "lite-undeclared: configuring failed ($status)"
    expect lite-undeclared "that ONNX uses protobuf-lite (its onnx::ModelProto is no google::protobuf::Message)"
    configure lite-declared -DONNX_DIR="$(fake lite "$plain;ONNX_USE_LITE_PROTO=1" declared)" -DSHAPEPROP_BUILD_PYTHON=OFF
    [ $status -eq 0 ] || fail "lite-declared: configuring failed ($status)"
    expect lite-declared "shapeprop: that ONNX uses protobuf-lite"
    configure full -DONNX_DIR="$(fake full "$plain" undeclared)" -DSHAPEPROP_BUILD_PYTHON=OFF
    [ $status -eq 0 ] || fail "full: configuring failed ($status)"
    expect full "shapeprop: ONNX 1.20.0 from $work/onnx-full-undeclared"
    expect_not full "protobuf-lite"
    ;;
  python)
    configure no-patchelf -DSHAPEPROP_PATCHELF="$work/no-such/patchelf" -DSHAPEPROP_BUILD_TESTS=ON
    [ $status -eq 0 ] || fail "no-patchelf: configuring failed ($status)"
    expect no-patchelf "skipping the Python package and its tests: patchelf (SHAPEPROP_PATCHELF='$work/no-such/patchelf') not found"
    expect_not no-patchelf "Python package for"
    if [ $status -eq 0 ]; then
      python_tests=$(ctest --test-dir "$work/no-patchelf" -N -R '^(python|differential)\.' | sed -n 's/^Total Tests: //p')
      [ "$python_tests" = 0 ] || fail "no-patchelf: $python_tests Python tests are still added"
    fi
    configure no-pybind11 -DCMAKE_DISABLE_FIND_PACKAGE_pybind11=ON
    [ $status -eq 0 ] || fail "no-pybind11: configuring failed ($status)"
    expect no-pybind11 "skipping the Python package and its tests: pybind11"
    # The package's own build (pip install .) still fails without them.
    configure skbuild -DSHAPEPROP_PATCHELF="$work/no-such/patchelf" -DSKBUILD=ON
    [ $status -ne 0 ] || fail "skbuild: configuring for pip succeeded without patchelf"
    expect skbuild "the Python package needs patchelf"
    # With them, the package is configured (the check above is not simply always skipping).
    configure with-all
    [ $status -eq 0 ] || fail "with-all: configuring failed ($status)"
    expect with-all "shapeprop: Python package for"
    expect_not with-all "skipping the Python package"
    ;;
  *) echo "configure_checks: unknown check '$what'" >&2; exit 2 ;;
esac
if [ $failures -gt 0 ]; then echo "configure_checks $what: $failures failed"; exit 1; fi
echo "configure_checks $what: all passed"
