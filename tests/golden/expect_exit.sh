#!/usr/bin/env bash
# expect_exit.sh N -- CMD...: runs CMD; succeeds only when CMD exits with status N.
want=$1
shift
[ "$1" = "--" ] && shift
"$@"
got=$?
if [ "$got" -ne "$want" ]; then
  echo "expect_exit: '$*' exited with $got, expected $want" >&2
  exit 1
fi
