#!/usr/bin/env bash
# readme_jobs_catch.sh SOURCE_DIR TOOL PYTHON: `gen-readme-jobs.sh --check` fails, showing the
# line and saying how to regenerate, on a README whose jobs section shows one output line
# that its command does not print (a copy of the README with the first one changed).
# repo.readme_jobs checks the README itself.
set -euo pipefail
src=${1:?usage: readme_jobs_catch.sh SOURCE_DIR TOOL PYTHON}
tool=${2:?usage: readme_jobs_catch.sh SOURCE_DIR TOOL PYTHON}
python=${3:?usage: readme_jobs_catch.sh SOURCE_DIR TOOL PYTHON}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The first line after a command of a console block, in the jobs section, gets a word more.
awk '/^<!-- BEGIN jobs/ { inside = 1 } /^<!-- END jobs/ { inside = 0 }
     inside && after_command && !done { $0 = $0 " (and a word more)"; done = 1 }
     { after_command = inside && /^\$ /; print }' "$src/README.md" >"$work/README.md"
grep -q -F '(and a word more)' "$work/README.md" || { echo "FAIL: no output line to change in the jobs section"; exit 1; }
set +e
out=$(SHAPEPROP_README="$work/README.md" SHAPEPROP_PYTHON="$python" bash "$src/scripts/gen-readme-jobs.sh" --check "$tool" 2>&1)
status=$?
set -e
printf '%s\n' "$out"
[ $status -eq 1 ] || { echo "FAIL: exit $status for a README that shows an output its command does not print, not 1"; exit 1; }
grep -F -e "(and a word more)" <<<"$out" | grep -q '^-' || { echo "FAIL: the diff does not show the changed line"; exit 1; }
grep -F -e "Regenerate it with: bash scripts/gen-readme-jobs.sh [" <<<"$out" >/dev/null || { echo "FAIL: no hint"; exit 1; }
echo "gen-readme-jobs.sh --check catches an output that differs from what the README shows"
