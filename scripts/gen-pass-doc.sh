#!/usr/bin/env bash
# scripts/gen-pass-doc.sh [--check] [TOOL]: writes the tables of the pass registry
# (include/transform/shapeprop/passes.def) into the docs, each between its BEGIN and END
# lines: docs/cli.md's table of passes (`TOOL passes`) and docs/report.md's table of each
# pass's counters (`TOOL counters`). TOOL: by default the release build's
# shapeprop-pass-doc. With --check it writes nothing and exits 1 when a table differs from
# the registry, saying how to regenerate it (the ctest repo.pass_doc runs it so).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/doc-block.sh
doc_options gen-pass-doc build/release/tools/shapeprop-pass-doc "$@"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stale=0
# table DOC WHAT: the block of DOC between the markers of `TOOL WHAT`.
table() {
  local doc=$1 what=$2
  local begin="<!-- BEGIN shapeprop-pass-doc $what (written by scripts/gen-pass-doc.sh from passes.def: do not edit) -->"
  local end="<!-- END shapeprop-pass-doc $what -->"
  "$tool" "$what" >"$work/$what"
  replace_block gen-pass-doc "$doc" "$begin" "$end" "$work/$what" "$work/doc"
  settle_doc gen-pass-doc "$doc" "$work/doc" "$tool $what" "the $what table of $doc differs from the registry" || stale=1
}
table docs/cli.md passes
table docs/report.md counters
if [ "$stale" -ne 0 ]; then
  echo "Regenerate them with: bash scripts/gen-pass-doc.sh [$tool] (after building shapeprop-pass-doc)."
  exit 1
fi
