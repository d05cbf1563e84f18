#!/usr/bin/env bash
# scripts/gen-cli-doc.sh [--check] [TOOL]: writes the usage block of docs/cli.md, between
# its BEGIN and END lines, from what `TOOL --help` prints (TOOL: by default the release
# build's onnx-infer-shapes), so that the doc says what the tool does and nothing else.
# With --check it writes nothing and exits 1 when the block differs from the help, saying
# how to regenerate it (the ctest repo.cli_doc runs it so).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
check=
if [ "${1:-}" = --check ]; then
  check=1
  shift
fi
tool=${1:-build/release/tools/onnx-infer-shapes}
doc=docs/cli.md
begin='<!-- BEGIN onnx-infer-shapes --help (written by scripts/gen-cli-doc.sh: do not edit) -->'
end='<!-- END onnx-infer-shapes --help -->'

[ -x "$tool" ] || { echo "gen-cli-doc: $tool is missing: build onnx-infer-shapes first" >&2; exit 2; }
for marker in "$begin" "$end"; do
  n=$(grep -c -x -F -e "$marker" "$doc" || true)
  [ "$n" -eq 1 ] || { echo "gen-cli-doc: $doc must hold the line '$marker' once, not $n times" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tool" --help >"$work/help"
# Everything up to BEGIN, the help as a text block, then END and what follows it.
awk -v begin="$begin" -v end="$end" -v help="$work/help" '
  $0 == begin { print; print "```text"; while ((getline line < help) > 0) print line; print "```"; skip = 1; next }
  $0 == end { skip = 0 }
  !skip { print }
' "$doc" >"$work/cli.md"

if [ -z "$check" ]; then
  if cmp -s "$work/cli.md" "$doc"; then
    echo "gen-cli-doc: $doc is up to date"
  else
    cp "$work/cli.md" "$doc"
    echo "gen-cli-doc: wrote the usage block of $doc from $tool --help"
  fi
  exit 0
fi
if ! cmp -s "$work/cli.md" "$doc"; then
  diff -u --label "$doc" --label "$tool --help" "$doc" "$work/cli.md" || true
  echo "gen-cli-doc: $doc differs from what '$tool --help' prints (above)."
  echo "Regenerate it with: bash scripts/gen-cli-doc.sh [$tool] (after building onnx-infer-shapes), and describe any new option in the text below the block."
  exit 1
fi
echo "gen-cli-doc: $doc matches $tool --help"
