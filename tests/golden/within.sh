#!/usr/bin/env bash
# within.sh SECONDS MEGABYTES -- CMD...: runs CMD under /usr/bin/time and fails unless it
# ended within SECONDS (wall time) with a peak resident memory of at most MEGABYTES (of
# CMD and every process it waited for); otherwise exits with CMD's status, its output
# passed through.
seconds=$1 megabytes=$2
shift 2
[ "$1" = "--" ] && shift
stats=$(mktemp)
/usr/bin/time -f '%e %M' -o "$stats" "$@"
status=$?
read -r took kilobytes < <(tail -1 "$stats")
rm -f "$stats"
if ! awk -v t="$took" -v s="$seconds" 'BEGIN { exit !(t <= s) }'; then
  echo "within: '$*' took $took s, more than $seconds s" >&2
  exit 1
fi
if [ "$kilobytes" -gt $((megabytes * 1024)) ]; then
  echo "within: '$*' peaked at $((kilobytes / 1024)) MB, more than $megabytes MB" >&2
  exit 1
fi
exit $status
