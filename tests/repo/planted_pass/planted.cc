// A pass planted by tests/repo/planted_pass.sh in a copy of the source tree, to show that a
// new pass is its own file and one line of passes.def: it rewrites nothing and says on
// stderr that it ran, with the body's node count.
#include <iostream>

#include "transform/pass.h"

namespace shapeprop::transform {

bool plant_nothing(PassContext& ctx) {
  size_t nodes = 0;
  for (NodeId id = ctx.body().first(); id != kNone; id = ctx.body().next(id)) ++nodes;
  std::cerr << "planted pass ran on " << nodes << " nodes\n";
  return false;
}

}  // namespace shapeprop::transform
