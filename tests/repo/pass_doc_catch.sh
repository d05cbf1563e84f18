#!/usr/bin/env bash
# pass_doc_catch.sh SOURCE_DIR TOOL: `gen-pass-doc.sh --check` fails, showing the row and
# saying how to regenerate, when the registry has a pass the doc lacks (a tool that prints
# TOOL's tables and one more row). repo.pass_doc checks TOOL itself.
set -euo pipefail
src=${1:?usage: pass_doc_catch.sh SOURCE_DIR TOOL}
tool=${2:?usage: pass_doc_catch.sh SOURCE_DIR TOOL}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#!/usr/bin/env bash\n"%s" "$1"\necho "| \\`a-new-pass\\` | body | one the doc does not list | \\`src/transform/new.cc\\` |"\n' \
  "$tool" >"$work/newer-tool"
chmod +x "$work/newer-tool"
set +e
out=$(bash "$src/scripts/gen-pass-doc.sh" --check "$work/newer-tool" 2>&1)
status=$?
set -e
printf '%s\n' "$out"
[ $status -eq 1 ] || { echo "FAIL: exit $status for a registry the doc lacks a row of, not 1"; exit 1; }
grep -F -e '+| `a-new-pass` | body' <<<"$out" >/dev/null || { echo "FAIL: the diff does not show the new row"; exit 1; }
grep -F -e "passes table of docs/cli.md differs" <<<"$out" >/dev/null || { echo "FAIL: cli.md's table not named"; exit 1; }
grep -F -e "counters table of docs/report.md differs" <<<"$out" >/dev/null || { echo "FAIL: report.md's table not named"; exit 1; }
grep -F -e "Regenerate them with: bash scripts/gen-pass-doc.sh [" <<<"$out" >/dev/null || { echo "FAIL: no hint"; exit 1; }
echo "gen-pass-doc.sh --check catches a registry that differs from the docs' tables"
