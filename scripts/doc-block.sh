# Sourced by gen-cli-doc.sh, gen-pass-doc.sh and gen-readme-jobs.sh: the blocks of the docs that a
# program writes.

# doc_options NAME DEFAULT_TOOL "$@": check=1 after a first argument --check, else empty;
# tool= the next argument, else DEFAULT_TOOL; exits 2 (saying so as NAME) when it is not
# an executable.
doc_options() {
  local name=$1 default=$2
  shift 2
  check=
  if [ "${1:-}" = --check ]; then
    check=1
    shift
  fi
  tool=${1:-$default}
  [ -x "$tool" ] || { echo "$name: $tool is missing: build $(basename "$default") first" >&2; exit 2; }
}

# replace_block NAME DOC BEGIN END CONTENT OUT: DOC with what lies between its lines BEGIN
# and END (each there once, else NAME says so and exits 2) replaced by the file CONTENT,
# written to OUT.
replace_block() {
  local name=$1 doc=$2 begin=$3 end=$4 content=$5 out=$6 marker n
  for marker in "$begin" "$end"; do
    n=$(grep -c -x -F -e "$marker" "$doc" || true)
    [ "$n" -eq 1 ] || { echo "$name: $doc must hold the line '$marker' once, not $n times" >&2; exit 2; }
  done
  awk -v begin="$begin" -v end="$end" -v content="$content" '
    $0 == begin { print; while ((getline line < content) > 0) print line; skip = 1; next }
    $0 == end { skip = 0 }
    !skip { print }
  ' "$doc" >"$out"
}

# settle_doc NAME DOC NEW LABEL STALE: DOC made NEW (the doc written anew from LABEL, saying
# so as NAME). With check set nothing is written: a DOC that differs shows the diff, says
# STALE, and returns 1.
settle_doc() {
  local name=$1 doc=$2 new=$3 label=$4 stale=$5
  if cmp -s "$new" "$doc"; then
    echo "$name: $doc is up to date with $label"
  elif [ -z "$check" ]; then
    cp "$new" "$doc"
    echo "$name: wrote $doc anew from $label"
  else
    diff -u --label "$doc" --label "$label" "$doc" "$new" || true
    echo "$name: $stale (above)."
    return 1
  fi
}
