#!/usr/bin/env bash
# scripts/gen-cli-doc.sh [--check] [TOOL]: writes the usage block of docs/cli.md, between
# its BEGIN and END lines, from what `TOOL --help` prints (TOOL: by default the release
# build's onnx-infer-shapes), so that the doc says what the tool does and nothing else.
# With --check it writes nothing and exits 1 when the block differs from the help, saying
# how to regenerate it (the ctest repo.cli_doc runs it so).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/doc-block.sh
doc_options gen-cli-doc build/release/tools/onnx-infer-shapes "$@"
doc=docs/cli.md
begin='<!-- BEGIN onnx-infer-shapes --help (written by scripts/gen-cli-doc.sh: do not edit) -->'
end='<!-- END onnx-infer-shapes --help -->'

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The help as a text block between BEGIN and END.
{ echo '```text'; "$tool" --help; echo '```'; } >"$work/help"
replace_block gen-cli-doc "$doc" "$begin" "$end" "$work/help" "$work/cli.md"

settle_doc gen-cli-doc "$doc" "$work/cli.md" "$tool --help" "$doc differs from what '$tool --help' prints" || {
  echo "Regenerate it with: bash scripts/gen-cli-doc.sh [$tool] (after building onnx-infer-shapes), and describe any new option in the text below the block."
  exit 1
}
