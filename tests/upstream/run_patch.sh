#!/usr/bin/env bash
# run_patch.sh SOURCE_DIR WORK_DIR PATCH: the ctest (label `upstream`, run by CI) of a
# proposal's patch on ONNX 1.21.0, the sources scripts/setup.sh keeps in the machine-level
# cache (onnx-src-1.21.0: the C++ sources of Debian's python3-onnx 1.21.0-1, built with
# cmake/onnx/CMakeLists.txt). proposals/check-patch.sh does the work, with
# CHECK_PATCH_CLEAN=1: the patch must apply without offset or fuzz. Both patches' tests
# share WORK_DIR, so the stock build is made once and the second patch costs an
# incremental build; each build is kept in the machine-level cache (upstream-builds,
# CHECK_PATCH_CACHE), so that a later run, from any clone, only tests the builds whose
# tree, patch and tools it has seen.
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 SOURCE_DIR WORK_DIR PATCH" >&2
  exit 2
fi
cache=${SHAPEPROP_CACHE:-/var/cache/shapeprop}
sources=$cache/onnx-src-1.21.0
checker=$(find "$sources" -maxdepth 4 -path '*/onnx/checker.cc' 2>/dev/null | head -n1 || true)
if [ -z "$checker" ]; then
  echo "upstream: no ONNX 1.21.0 sources at $sources (scripts/setup.sh puts the C++ sources of python3-onnx 1.21.0-1 there)" >&2
  exit 2
fi
tree=$(dirname "$(dirname "$checker")")
CHECK_PATCH_CLEAN=1 CHECK_PATCH_CACHE=${CHECK_PATCH_CACHE:-$cache/upstream-builds} \
  exec bash "$1/proposals/check-patch.sh" "$3" "$tree" "$2"
