// The before/after table a terminal shows after the summary line.
#pragma once

#include <string>

#include "shapeprop/report.h"

namespace shapeprop {

// The before/after table a terminal shows after the summary line: nodes, functions, Ifs,
// CastLikes and calls, then up to `op_rows` op types, those that changed most first.
std::string counts_table(const ModelCounts& before, const ModelCounts& after, size_t op_rows = 12);

}  // namespace shapeprop
