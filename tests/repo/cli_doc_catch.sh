#!/usr/bin/env bash
# cli_doc_catch.sh SOURCE_DIR TOOL: `gen-cli-doc.sh --check` fails, showing the line and
# saying how to regenerate, when the help has a line the doc lacks (a tool whose --help
# prints TOOL's and one more option). repo.cli_doc checks TOOL itself.
set -euo pipefail
src=${1:?usage: cli_doc_catch.sh SOURCE_DIR TOOL}
tool=${2:?usage: cli_doc_catch.sh SOURCE_DIR TOOL}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf '#!/usr/bin/env bash\n"%s" --help\necho "  --a-new-flag           one the doc does not list"\n' "$tool" >"$work/newer-tool"
chmod +x "$work/newer-tool"
set +e
out=$(bash "$src/scripts/gen-cli-doc.sh" --check "$work/newer-tool" 2>&1)
status=$?
set -e
printf '%s\n' "$out"
[ $status -eq 1 ] || { echo "FAIL: exit $status for a help the doc lacks a line of, not 1"; exit 1; }
grep -F -e "+  --a-new-flag" <<<"$out" >/dev/null || { echo "FAIL: the diff does not show the new line"; exit 1; }
grep -F -e "Regenerate it with: bash scripts/gen-cli-doc.sh [" <<<"$out" >/dev/null || { echo "FAIL: no hint"; exit 1; }
echo "gen-cli-doc.sh --check catches a help that differs from docs/cli.md"
