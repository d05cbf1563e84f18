#!/usr/bin/env bash
# sid-root.sh NAME PACKAGE...: a Debian sid root with PACKAGEs installed, made once with
# `mmdebstrap --variant=apt` from the Debian mirror this machine is configured with, and
# kept in the machine-level cache as $SHAPEPROP_CACHE/sid-roots/NAME (default cache
# /var/cache/shapeprop). Prints the root's path on stdout.
#
# The root's apt lists sid and experimental (experimental at apt's usual low priority, so
# a package comes from there only when asked: `python3-foo/experimental`, apt's syntax).
# The sid and experimental Release files on the mirror may be past their Valid-Until, so
# that check is off inside the root.
#
# Idempotent: a root that is already there is used as it is, whatever PACKAGEs say (give
# a new NAME for a different set). It is built in a temporary folder beside it and renamed
# into place when complete, so an interrupted run leaves no half root under NAME; a
# concurrent run for the same NAME waits on a lock. Needs root (mmdebstrap's root mode);
# installs mmdebstrap when it is missing (scripts/debian-install.sh, which waits for apt's locks).
set -euo pipefail

say() { printf 'sid-root: %s\n' "$*" >&2; }
usage() { echo "usage: $0 NAME PACKAGE..." >&2; exit 2; }

[ $# -ge 1 ] || usage
name=$1
shift
case "$name" in ''|*/*|.*) say "NAME must be a plain folder name, got '$name'"; exit 2 ;; esac
[ "$(id -u)" -eq 0 ] || { say "needs root (mmdebstrap in root mode, chroot to use the root)"; exit 2; }

cache=${SHAPEPROP_CACHE:-/var/cache/shapeprop}
roots=$cache/sid-roots
root=$roots/$name

if [ -d "$root" ]; then
  echo "$root"
  exit 0
fi
[ $# -ge 1 ] || { say "no root '$name' yet, and no packages given to make it"; exit 2; }

mkdir -p "$roots"
exec 9>"$roots/.$name.lock"
flock 9
if [ -d "$root" ]; then  # made by a concurrent run while this one waited
  echo "$root"
  exit 0
fi

if ! command -v mmdebstrap >/dev/null 2>&1; then
  say "installing mmdebstrap"
  bash "$(dirname "${BASH_SOURCE[0]}")/debian-install.sh" mmdebstrap
fi

# The Debian mirror of this machine's apt sources (as scripts/setup.sh finds it).
mirror=$(grep -hoE '^(URIs:|deb(-src)?)[[:space:]]+\S+' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null \
         | awk '{print $2}' | grep -E '/debian/?$' | head -n1 || true)
[ -n "$mirror" ] || { say "no Debian mirror found in /etc/apt sources"; exit 1; }
mirror=${mirror%/}

work=$(mktemp -d "$roots/.$name.XXXXXX")
chmod 755 "$work"  # apt downloads as _apt, which must reach the root inside
trap 'rm -rf "$work"' EXIT
say "making $root from $mirror (sid, experimental): $*"
include=$(IFS=,; echo "$*")
mmdebstrap --variant=apt --mode=root --format=directory \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --aptopt='APT::Install-Recommends "false"' \
  --include="$include" \
  sid "$work/root" \
  "deb $mirror sid main" \
  "deb $mirror experimental main" >&2
mv "$work/root" "$root"
echo "$root"
