// Reads the rule language of schemas/ (described in schemas/README.md).
#pragma once

#include <string>
#include <string_view>
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

}  // namespace shapeprop::schemas
