#!/usr/bin/env bash
# names_by_id.sh DIR: the transform layer (DIR/src/transform) keys no container by value
# names: the rewrites name values by id (ir::Body, ir::MutableBody), and what still needs
# names (fresh names, what subgraphs define, scoped renaming) goes through src/ir/names.h.
# Fails, naming file and line, on a use of the name hash map or of a set or map keyed by
# std::string that is not one of the module-level keys (domains, function ids, attribute
# names) listed below. `names_by_id.sh --catch` checks that a planted use fails.
set -euo pipefail
if [ "${1:-}" = --catch ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  mkdir -p "$work/src/transform"
  printf '#include "support/name_map.h"\nstd::unordered_set<std::string> seen;\n' >"$work/src/transform/planted.cc"
  set +e
  out=$(bash "${BASH_SOURCE[0]}" "$work" 2>&1)
  status=$?
  set -e
  printf '%s\n' "$out"
  [ $status -eq 1 ] || { echo "FAIL: exit $status on a planted name-keyed set, not 1"; exit 1; }
  grep -q 'planted.cc:1:' <<<"$out" || { echo "FAIL: the include is not named"; exit 1; }
  grep -q 'planted.cc:2:' <<<"$out" || { echo "FAIL: the set is not named"; exit 1; }
  echo "names_by_id.sh catches name-keyed containers in src/transform"
  exit 0
fi
dir=${1:?usage: names_by_id.sh SOURCE_DIR | --catch}
# Module-level keys, by name on purpose: opset domains, functions, attribute names.
allowed='collect_domains|std::set<std::string> (used|in_body|local_domains|seen)|std::map<std::string, int64_t>|std::unordered_map<std::string, int64_t> versions|std::map<std::string, const AttributeProto\*>|std::unordered_map<std::string, const AttributeProto\*>|std::unordered_map<std::string, const FunctionProto\*>|std::map<std::pair<std::string, std::string>|function_names_'
found=$(grep -rnE 'NameMap|support/name_map\.h|(unordered_)?(set|map|multimap)<std::string(_view)?[,>]' "$dir/src/transform" |
        grep -vE "$allowed" || true)
if [ -n "$found" ]; then
  printf '%s\n' "$found"
  echo "src/transform keys a container by name; name values by ir::ValueId, or use src/ir/names.h"
  exit 1
fi
echo "src/transform keys no container by value names"
