#!/usr/bin/env bash
# self_contained.sh SOURCE_DIR: the repository carries everything its tests read. Fails
# when a file of the repository names the team's folder beside a clone (a user's clone
# has nothing beside it), or when the test corpus is not in the repository.
set -u
src=${1:?usage: self_contained.sh SOURCE_DIR}
cd "$src" || exit 2
# Spelled in two pieces so that this script does not name it itself.
beside=".."
beside+="/shared"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  files=$(git ls-files)
else
  files=$(find . -type f -not -path './build/*' -not -path '*/node_modules/*' | sed 's|^\./||')
fi
status=0
hits=$(printf '%s\n' "$files" | tr '\n' '\0' | xargs -0 grep -I -l -F -e "$beside" 2>/dev/null)
if [ -n "$hits" ]; then
  echo "files that name $beside (a clone has nothing beside it; read tests/data instead):"
  printf '  %s\n' $hits
  status=1
fi
for need in tests/data/corpus/README.md tests/data/corpus/torchlib-2024-03/onnxscript-0.7.1.tsv \
            tests/data/corpus/torchlib-2024-03/models/transformer_L16.onnx; do
  if [ ! -f "$need" ]; then
    echo "missing from the repository: $need"
    status=1
  fi
done
n=$(find tests/data/corpus/torchlib-2024-03/functions -name '*.onnxtxt' 2>/dev/null | wc -l)
if [ "$n" -ne 332 ]; then
  echo "tests/data/corpus/torchlib-2024-03/functions holds $n function bodies, not 332"
  status=1
fi
[ $status -eq 0 ] && echo "self-contained: no file names $beside; the corpus is in tests/data/corpus"
exit $status
