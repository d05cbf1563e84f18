#!/usr/bin/env bash
# examples_follow_build.sh SOURCE_DIR WORK_DIR: the ctest upstream.examples_follow_build.
# The two patches' runs share a work folder and take their builds from the machine-level
# cache as links; each patch's examples must go through that patch's checker. Runs
# if-taken-branch, then function-value-info, then if-taken-branch again in a fresh work
# folder: each run must give every example its stated verdict. (A clean clone's CI once ran
# function-value-info's examples through the checker built for if-taken-branch, which let
# its false value_info pass.) Runs after the two patch tests, so the builds are cached.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 SOURCE_DIR WORK_DIR" >&2; exit 2; }
src=$1 work=$2
rm -rf "$work"
for patch in if-taken-branch function-value-info if-taken-branch; do
  echo "== $patch"
  bash "$src/tests/upstream/run_patch.sh" "$src" "$work" "$src/proposals/$patch.patch"
done
