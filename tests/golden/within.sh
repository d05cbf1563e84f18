#!/usr/bin/env bash
# within.sh SECONDS MEGABYTES [--baseline 'BASE'] -- CMD...: runs CMD under /usr/bin/time
# and fails unless it ended within SECONDS (wall time) with a peak resident memory of at
# most MEGABYTES (of CMD and every process it waited for); otherwise exits with CMD's
# status, its output passed through. With --baseline, MEGABYTES bound what CMD holds beyond
# the peak of the shell command BASE (its status and output ignored): a binary's own start
# differs between builds (an ASan build of onnx-infer-shapes peaks at 53 MB reading an
# empty input, a release build at 11 MB), what one input costs should not.
seconds=$1 megabytes=$2
shift 2
baseline_kb=0
if [ "$1" = "--baseline" ]; then
  stats=$(mktemp)
  /usr/bin/time -f '%M' -o "$stats" sh -c "$2" >/dev/null 2>&1
  baseline_kb=$(tail -1 "$stats")
  rm -f "$stats"
  shift 2
fi
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
if [ $((kilobytes - baseline_kb)) -gt $((megabytes * 1024)) ]; then
  echo "within: '$*' peaked at $((kilobytes / 1024)) MB, more than $megabytes MB over the baseline's $((baseline_kb / 1024)) MB" >&2
  exit 1
fi
exit $status
