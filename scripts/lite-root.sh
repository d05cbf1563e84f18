#!/usr/bin/env bash
# lite-root.sh: prints the path of the Debian sid root that holds Debian's own ONNX (built
# with protobuf-lite) and what shapeprop needs to build and test against it, making it
# first if the machine-level cache has none (scripts/sid-root.sh, once; a few minutes).
# libonnx-dev and python3-onnx 1.21.0-1 come from experimental; when the mirror no longer
# has them, 1.20.0-6 from sid (and it says so). Used by scripts/test-lite.sh (the suites
# against that ONNX) and scripts/setup.sh (ONNX 1.21's backend node tests are generated
# there with python3-onnx's generators). Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf 'lite-root: %s\n' "$*" >&2; }

packages=(
  build-essential cmake ninja-build pkg-config
  protobuf-compiler libprotobuf-dev libboost-graph-dev librange-v3-dev
  libgtest-dev libgmock-dev llvm-tools nodejs
  python3 python3-dev python3-pybind11 pybind11-dev patchelf
  python3-pytest python3-jsonschema python3-venv python3-pip python3-scikit-build-core
  bsdutils  # script(1), the pseudo-terminal of golden report/terminal.test
)
# The root's name holds a digest of the list, so that a changed list makes a new root
# (sid-root.sh takes a root that is there as it is).
digest=$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-8)
if bash "$here/scripts/sid-root.sh" "lite-onnx-1.21.0-1-$digest" "${packages[@]}" \
     libonnx-dev/experimental libonnx1l/experimental python3-onnx/experimental; then
  exit 0
fi
say "libonnx-dev 1.21.0-1 (experimental) could not be installed: falling back to sid's 1.20.0-6"
bash "$here/scripts/sid-root.sh" "lite-onnx-1.20.0-6-$digest" "${packages[@]}" libonnx-dev=1.20.0-6 python3-onnx=1.20.0-6
