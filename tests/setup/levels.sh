#!/usr/bin/env bash
# levels.sh SOURCE_DIR: on an empty machine-level cache, `setup.sh --dry-run library` would
# install ONNX's library and nothing that only the test suite needs, `setup.sh --dry-run
# tests` that and the test suite's parts (ONNX's C++ tests, the 1.17 tarball, the backend
# models, the node tests), and neither writes anything into the cache.
set -euo pipefail
src=${1:?usage: levels.sh SOURCE_DIR}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
dry_run() {
  local status=0
  SHAPEPROP_CACHE=$cache bash "$src/scripts/setup.sh" --dry-run "$1" >"$cache.$1" 2>&1 || status=$?
  cat "$cache.$1"
  rm -f "$cache.$1"
  [ "$status" -eq 1 ] || { echo "FAIL: setup.sh --dry-run $1 exited $status on an empty cache, not 1"; exit 1; }
}
library=$(dry_run library)
tests=$(dry_run tests)
printf 'library:\n%s\ntests:\n%s\n' "$library" "$tests"
test_only="C\+\+ tests|source tarball|backend test models|node tests|onnxruntime-node|clang-14|python3-pytest"
if grep -E "$test_only" <<<"$library"; then echo "FAIL: the library level would install a part of the test level (above)"; exit 1; fi
while IFS= read -r line; do
  grep -q -x -F -e "$line" <<<"$tests" || { echo "FAIL: the tests level lacks '$line' of the library level"; exit 1; }
done <<<"$library"
for part in "the ONNX 1.17.0 source tarball" "ONNX's backend test models"; do
  grep -q -F -e "$part" <<<"$tests" || { echo "FAIL: the tests level would not install $part"; exit 1; }
done
[ -z "$(ls -A "$cache")" ] || { echo "FAIL: a dry run wrote into the cache: $(ls -A "$cache")"; exit 1; }
echo "setup.sh's library level holds no part of the test level; the tests level holds it"
