#!/usr/bin/env bash
# cache_follows_patch.sh SOURCE_DIR WORK_DIR PATCH: the ctest upstream.cache_follows_patch.
# The upstream suite keeps its ONNX builds in the machine-level cache under a key of the
# staged tree (check-patch.sh, CHECK_PATCH_CACHE); a changed patch must be built again.
# Asks check-patch.sh for its plan (CHECK_PATCH_PLAN=1: keys and cache states, no build) for
# PATCH twice and for PATCH with one added line changed: the stock key stays, the patched
# key is the same for the same patch and another for the changed one, which is "to build".
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 SOURCE_DIR WORK_DIR PATCH" >&2; exit 2; }
src=$1 work=$2 patch=$3
mkdir -p "$work"
# The first added line of a hunk (not a file header) gets a trailing comment.
awk '!done && /^\+/ && !/^\+\+\+ / { print $0 " // changed"; done = 1; next } { print }' "$patch" >"$work/changed.patch"
! cmp -s "$patch" "$work/changed.patch" || { echo "no added line in $patch"; exit 2; }

plan() { CHECK_PATCH_PLAN=1 bash "$src/tests/upstream/run_patch.sh" "$src" "$work/tree" "$1" | grep '^plan: '; }
first=$(plan "$patch")
again=$(plan "$patch")
changed=$(plan "$work/changed.patch")
printf '%s\n' "patch:" "$first" "patch again:" "$again" "changed patch:" "$changed"
key() { awk -v n="$2" '$2 == n { print $3 }' <<<"$1"; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
[ -n "$(key "$first" stock)" ] && [ -n "$(key "$first" patched)" ] || fail "no keys in the plan"
[ "$first" = "$again" ] || fail "the same patch gave other keys or states"
[ "$(key "$first" stock)" = "$(key "$changed" stock)" ] || fail "the stock key changed with the patch"
[ "$(key "$first" patched)" != "$(key "$changed" patched)" ] || fail "the changed patch has the same key"
grep -q '^plan: patched .* to build$' <<<"$changed" || fail "the changed patch is not to be built"
if [ $failures -gt 0 ]; then exit 1; fi
echo "cache_follows_patch: the key follows the patch"
