#!/usr/bin/env bash
# static_protobuf.sh TOOL...: each executable built with the target property
# SHAPEPROP_STATIC_PROTOBUF (cmake/static_protobuf.cmake) carries protobuf from its static
# archive: no libprotobuf among the shared libraries it needs, and no protobuf symbol
# left for the dynamic linker to resolve.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: static_protobuf.sh TOOL..." >&2; exit 2; }
for tool in "$@"; do
  needed=$(readelf -d "$tool" | grep -F '(NEEDED)' || true)
  if grep -q 'libprotobuf' <<<"$needed"; then
    echo "FAIL: $tool needs a shared protobuf:"; echo "$needed"; exit 1
  fi
  undefined=$(nm -D --undefined-only "$tool" | grep -c 'google8protobuf' || true)
  if [ "$undefined" != 0 ]; then
    echo "FAIL: $tool leaves $undefined protobuf symbols to the dynamic linker"; exit 1
  fi
  echo "$(basename "$tool"): protobuf linked in, no shared protobuf needed"
done
