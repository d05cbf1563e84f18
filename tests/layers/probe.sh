#!/usr/bin/env bash
# Builds one probe of tests/layers and says whether it went as the layering requires.
#   probe.sh BUILD_DIR TARGET builds          the probe must compile
#   probe.sh BUILD_DIR TARGET refuses HEADER  it must fail, and fail for HEADER not found
set -uo pipefail
build=$1 target=$2 expect=$3 header=${4:-}
out=$(cmake --build "$build" --target "$target" 2>&1); status=$?
if [[ $expect == builds ]]; then
  (( status == 0 )) && exit 0
  echo "probe $target should build and does not:"; echo "$out" | tail -20; exit 1
fi
if (( status == 0 )); then
  echo "probe $target includes $header, a higher layer's header, and compiles: the layering is open"; exit 1
fi
# g++: "fatal error: HEADER: No such file or directory"; clang: "fatal error: 'HEADER' file not found"
if grep -qE "(fatal error: $header: No such file|'$header' file not found)" <<<"$out"; then exit 0; fi
echo "probe $target failed, but not for want of $header:"; echo "$out" | tail -20; exit 1
