#!/usr/bin/env bash
# lite-root.sh [experimental|sid]: prints the path of a Debian sid root that holds Debian's
# own ONNX (built with protobuf-lite) and what shapeprop needs to build and test against it,
# making it first if the machine-level cache has none (scripts/sid-root.sh, once; a few
# minutes). Two roots, one ONNX each:
#   experimental (the default)  libonnx-dev, libonnx1l and python3-onnx 1.21.0-1 from
#                               experimental; when the mirror no longer has them, the sid
#                               root below (and it says so);
#   sid                         sid's libonnx-dev and python3-onnx, what a Debian testing or
#                               sid user installs (1.20.0-6 when this was written; a root
#                               keeps the version it was made with).
# Used by scripts/test-lite.sh (the suites against each) and scripts/setup.sh (ONNX 1.21's
# backend node tests are generated in the experimental root with python3-onnx's generators).
# Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
say() { printf 'lite-root: %s\n' "$*" >&2; }

which=${1:-experimental}
case $which in experimental | sid) ;; *) say "usage: $0 [experimental|sid]"; exit 2 ;; esac

packages=(
  build-essential cmake ninja-build pkg-config ccache
  protobuf-compiler libprotobuf-dev libboost-graph-dev librange-v3-dev
  libgtest-dev libgmock-dev llvm-tools nodejs
  python3 python3-dev python3-pybind11 pybind11-dev patchelf
  python3-pytest python3-jsonschema python3-venv python3-pip python3-scikit-build-core
  bsdutils  # script(1), the pseudo-terminal of golden report/terminal.test
)
# The root's name holds a digest of the list, so that a changed list makes a new root
# (sid-root.sh takes a root that is there as it is).
digest=$(printf '%s\n' "${packages[@]}" | sha256sum | cut -c1-8)
sid_root() { bash "$here/scripts/sid-root.sh" "lite-sid-$digest" "${packages[@]}" libonnx-dev python3-onnx; }

if [ "$which" = sid ]; then
  sid_root
  exit
fi
if bash "$here/scripts/sid-root.sh" "lite-experimental-$digest" "${packages[@]}" \
     libonnx-dev/experimental libonnx1l/experimental python3-onnx/experimental; then
  exit 0
fi
say "libonnx-dev 1.21.0-1 (experimental) could not be installed: falling back to sid's"
sid_root
