// What the transform says of itself: the summary line, --debug-analysis's counter lines,
// the rewrites that assume symbolic dims >= 1, the passes still changing at the end.
#pragma once

#include <string>
#include <vector>

#include "shapeprop/passes.h"

namespace shapeprop::transform {

// What --debug-analysis says of the rewrites that hold only because symbolic dims are at
// least 1 (TransformResult::rewrites_assuming_positive_dims): a line each, empty when none.
std::string assumption_report(const std::vector<std::string>& rewrites_assuming_positive_dims);

// The passes whose counters differ between `before` and `after`, in registry order.
std::string passes_that_counted(const Counters& before, const Counters& after);

}  // namespace shapeprop::transform
