// Reads the rule language of schemas/ (described in schemas/README.md).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "schemas/rule.h"
#include "shapeprop/diagnostics.h"

namespace shapeprop::schemas {

// Parses one rule file's text; `file` names it in positions and diagnostics. A malformed
// file is one error at file:line:col. Beyond the syntax, each rule is checked for what
// would otherwise fail silently at inference time: an output dim naming a symbol no input
// binds, an undeclared attribute or type variable, a shape function output that is not
// an output of the layout.
Result<std::vector<OpRule>> parse_rules(std::string_view text, const std::string& file);

// The ops a rule file's text states, as (domain, op, since) keys in file order, read from
// its `op` lines alone (a line whose first word is `op`, then the op's name and an
// optional `since N`) without parsing the rules: what load_op_rules indexes a file by
// before it reads the file at the first lookup of one of them. nullopt where an `op`
// line is not of that form. For a well-formed file, the keys of parse_rules' rules.
std::optional<std::vector<std::tuple<std::string, std::string, int>>> scan_rule_ops(std::string_view text);

}  // namespace shapeprop::schemas
