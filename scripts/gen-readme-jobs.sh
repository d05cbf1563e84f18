#!/usr/bin/env bash
# scripts/gen-readme-jobs.sh [--check] [TOOL]: runs every command of the README's jobs section
# (between its BEGIN and END lines) and writes what each prints under it (scripts/readme_jobs.py
# says how: `$ ` lines of console blocks through bash, `>>> ` lines of pycon blocks through
# Python), with TOOL's folder first on PATH (TOOL: by default the release build's
# onnx-infer-shapes) and the Python package beside it (TOOL's build folder's python/) on
# PYTHONPATH, run by $SHAPEPROP_PYTHON (default /usr/bin/python3). With --check it writes
# nothing and exits 1 when an output differs from what the README shows, saying how to
# regenerate it (the ctest repo.readme_jobs runs it so). SHAPEPROP_README: another file to
# check than README.md (repo.readme_jobs_catches_drift).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/doc-block.sh
doc_options gen-readme-jobs build/release/tools/onnx-infer-shapes "$@"
doc=${SHAPEPROP_README:-README.md}
begin='<!-- BEGIN jobs (what each command prints is written by scripts/gen-readme-jobs.sh) -->'
end='<!-- END jobs -->'
tool=$(cd "$(dirname "$tool")" && pwd)/$(basename "$tool")
package=$(dirname "$(dirname "$tool")")/python
[ -d "$package/shapeprop" ] || { echo "gen-readme-jobs: no Python package in $package: build shapeprop_python first" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The section alone (replace_block checks that each marker is there once).
replace_block gen-readme-jobs "$doc" "$begin" "$end" /dev/null "$work/unused"
awk -v begin="$begin" -v end="$end" '$0 == end { inside = 0 } inside { print } $0 == begin { inside = 1 }' \
  "$doc" >"$work/section"
PATH="$(dirname "$tool"):$PATH" PYTHONPATH="$package${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 \
  "${SHAPEPROP_PYTHON:-/usr/bin/python3}" scripts/readme_jobs.py "$work/section" "$work/section.new" "$PWD"
replace_block gen-readme-jobs "$doc" "$begin" "$end" "$work/section.new" "$work/README.md"

settle_doc gen-readme-jobs "$doc" "$work/README.md" "what the commands of its jobs section print" \
  "$doc's jobs section shows other outputs than its commands print" || {
  echo "Regenerate it with: bash scripts/gen-readme-jobs.sh [$tool] (after building onnx-infer-shapes and shapeprop_python), and check that the text around still says what they show."
  exit 1
}
