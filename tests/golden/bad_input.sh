#!/usr/bin/env bash
# bad_input.sh OUTPUT -- CMD...: asserts what every bad input must get from the CLI:
# exit status 2, exactly one line on stderr, and no file at OUTPUT. Echoes that line on
# stdout for FileCheck.
out=$1
shift
[ "$1" = "--" ] && shift
err=$(mktemp)
"$@" 2>"$err" >/dev/null
status=$?
fail=0
if [ "$status" -ne 2 ]; then echo "bad_input: exit status $status, expected 2" >&2; fail=1; fi
lines=$(wc -l <"$err")
if [ "$lines" -ne 1 ]; then echo "bad_input: $lines lines on stderr, expected 1:" >&2; cat "$err" >&2; fail=1; fi
if [ -e "$out" ]; then echo "bad_input: output file $out exists" >&2; fail=1; fi
# No temporary file may be left beside the output either (save_model writes
# ".NAME.tmp.XXXXXX" beside the target, then renames it). Only this output's: the folder
# is shared with the tests that run beside this one, whose saves are under way.
base=$(basename "$out" | sed 's/[][\.*^$]/\\&/g')
if ls -a "$(dirname "$out")" 2>/dev/null | grep -qE "^\.${base}\.tmp\.[A-Za-z0-9]{6}\$"; then
  echo "bad_input: temporary file left" >&2
  fail=1
fi
cat "$err"
rm -f "$err"
exit $fail
