#!/usr/bin/env bash
# in-sid-root.sh ROOT [-o DIR] CMD...: runs CMD inside the sid root ROOT (made by
# scripts/sid-root.sh) with this clone bound as /tmp/shapeprop, its working folder, and
# DIR, when given, as /tmp/out. A private mount namespace holds /proc, /sys, /dev, a tmpfs
# /tmp and those binds, so nothing stays mounted and the cached root is not changed; the
# environment is a fresh one (PATH, HOME=/tmp, LANG, and SHAPEPROP_JOBS when set). The
# compilers inside share one ccache folder in the machine-level cache, ccache-sid (a
# separate one: sid's ccache is newer than the machine's), bound as /tmp/ccache with
# CCACHE_DIR naming it, so that the builds in every root and clone reuse each other's
# objects. Needs root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 ROOT [-o DIR] CMD..." >&2; exit 2; }
root=$1
shift
out=
if [ "$1" = "-o" ]; then
  out=$(cd "$2" && pwd)
  shift 2
fi
[ -x "$root/bin/sh" ] || { echo "in-sid-root: $root is no root" >&2; exit 2; }
ccache_dir=${SHAPEPROP_CACHE:-/var/cache/shapeprop}/ccache-sid
mkdir -p "$ccache_dir"

unshare --mount --pid --fork --mount-proc="$root/proc" bash -euo pipefail -c '
root=$1 here=$2 out=$3 jobs=$4 ccache=$5
shift 5
mount -t sysfs sysfs "$root/sys" 2>/dev/null || mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
mkdir "$root/tmp/shapeprop"
mount --bind "$here" "$root/tmp/shapeprop"
if [ -n "$out" ]; then mkdir "$root/tmp/out" && mount --bind "$out" "$root/tmp/out"; fi
mkdir "$root/tmp/ccache"
mount --bind "$ccache" "$root/tmp/ccache"
exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8 \
  CCACHE_DIR=/tmp/ccache ${jobs:+SHAPEPROP_JOBS=$jobs} bash -c "cd /tmp/shapeprop && exec \"\$@\"" in-sid-root "$@"
' in-sid-root "$root" "$here" "$out" "${SHAPEPROP_JOBS:-}" "$ccache_dir" "$@"
