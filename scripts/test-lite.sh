#!/usr/bin/env bash
# test-lite.sh: shapeprop against Debian's own ONNX, which is built with protobuf-lite.
# In a Debian sid root (scripts/lite-root.sh, made once into the machine-level cache) with
# libonnx-dev and python3-onnx 1.21.0-1 from experimental (1.20.0-6 from sid when those
# are gone, and it says so) and shapeprop's build dependencies, it
#   1. builds shapeprop against that ONNX with sid's compiler and CMake (build/lite) and
#      runs its unit, golden, corpus and Python suites (ctest -L 'unit|golden|corpus|python';
#      the Python package is built for the root's python3 and tested with its python3-onnx);
#   2. installs the package from this clone as Python users do, `pip install
#      --no-build-isolation .` (pyproject.toml: scikit-build-core driving the project's
#      CMake) into a virtual environment that sees the root's packages, and runs the
#      Python tests against that install (tests/python: SHAPEPROP_PACKAGE_DIR makes them
#      check that the installed package is the one imported; none may skip).
# The work inside the root is scripts/test-lite-inside.sh, run by scripts/in-sid-root.sh
# with the clone bound in; the build and the environment are under build/ in the clone,
# so the cached root is never changed. Needs root. Environment: SHAPEPROP_JOBS (default:
# the number of cores).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=${SHAPEPROP_JOBS:-$(nproc)}
say() { printf 'test-lite: %s\n' "$*" >&2; }

root=$(bash "$here/scripts/lite-root.sh")
say "root $root: $(chroot "$root" dpkg-query -W -f='libonnx-dev ${Version}, ' libonnx-dev)$(chroot "$root" python3 --version)"

SHAPEPROP_JOBS=$jobs bash "$here/scripts/in-sid-root.sh" "$root" bash scripts/test-lite-inside.sh
