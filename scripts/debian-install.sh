#!/usr/bin/env bash
# debian-install.sh [--chroot ROOT] PACKAGE...: `apt-get update` and `apt-get install` of
# PACKAGEs (no recommends), on this machine or, with --chroot, in the Debian root ROOT. Needs
# root. Every apt-get of the project's scripts that changes a system goes through here, so
# that two of them started at once (test.sh makes the sid roots, whose sid-root.sh installs
# mmdebstrap, while setup.sh installs the Debian packages) wait for each other instead of
# failing on apt's locks:
#   - they hold one lock of their own, /run/lock/shapeprop-apt.lock (flock), for the update
#     and the install together;
#   - against any other apt (unattended-upgrades, a user's), install waits for dpkg's lock
#     (-o DPkg::Lock::Timeout), and update, which that option does not cover (apt's lists
#     lock), is tried again while it fails on a lock;
# each wait for at most SHAPEPROP_APT_WAIT seconds (default 900).
set -euo pipefail
say() { printf 'debian-install: %s\n' "$*" >&2; }

in_root=()
if [ "${1:-}" = --chroot ]; then
  in_root=(chroot "$2")
  shift 2
fi
[ $# -ge 1 ] || { say "usage: $0 [--chroot ROOT] PACKAGE..."; exit 2; }
wait_s=${SHAPEPROP_APT_WAIT:-900}

lock=/run/lock/shapeprop-apt.lock
[ -d /run/lock ] || lock=/tmp/shapeprop-apt.lock
exec 8>"$lock"
if ! flock -n 8; then
  say "waiting for another of shapeprop's apt-get runs to finish"
  flock -w "$wait_s" 8 || { say "still locked after $wait_s s: $lock"; exit 1; }
fi

apt=("${in_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o "DPkg::Lock::Timeout=$wait_s")
err=$(mktemp)
trap 'rm -f "$err"' EXIT
deadline=$((SECONDS + wait_s))
until "${apt[@]}" update -qq 2>"$err"; do
  if ! grep -q 'Could not get lock' "$err" || [ "$SECONDS" -ge "$deadline" ]; then
    cat "$err" >&2
    exit 1
  fi
  say "apt's lists are locked by another process: trying again in 5 s"
  sleep 5
done
cat "$err" >&2
"${apt[@]}" install -y -qq --no-install-recommends "$@" >&2
