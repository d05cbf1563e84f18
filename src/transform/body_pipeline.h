// The rewrite passes over one body (passes.def lists them), run on the mutable IR until
// none changes anything, or, in a dry run, until one would.
#pragma once

#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "fold_body.h"
#include "pass.h"
#include "shapeprop/diagnostics.h"

namespace shapeprop::transform {

// The body pass `pass` (a Body pass of passes.def other than fold and dce, which work on
// node lists: fold_body.h).
BodyPassFn body_pass(Pass pass);

struct BodyRun {
  bool changed = false;  // something changed (in a dry run: would change)
  // The node list was changed (a pass, or the tidying: MutableBody::changed); not in a dry run.
  bool nodes_changed = false;
  // The pass that still changed the body in the last round allowed (the rewrites did not
  // reach a fixed point), if one did.
  std::optional<Pass> still_changing;
  // With tidy in the main graph, the initializers nothing reads went too (by use lists).
  bool initializers_tidied = false;
};

// What a pipeline watches of the passes over a body: the time each takes, and the body
// right after a pass first ran over it (--print-after).
struct PassWatch {
  PassTimes* times = nullptr;
  std::function<void(Pass, const ir::MutableBody&)> after_first;
};

// Runs `passes` over the top level of `nodes` (whose facts `facts` gives by place; `target`
// says where constants go; `interface` names stay): share-initializers once, the others in
// rounds until none changes anything (at most kMaxBodyRounds), or, with `dry`, until one
// would. Counts what it does in `counters`, and tells `watch` (not in a dry run). With `tidy` (the dce pass; not in a dry run),
// Identity chains at the top level collapse and dead nodes go before the passes, and
// again after them when they changed something: the same body edits, by value id; and,
// in the main graph (target.main_graph), the initializers that nothing reads then go.
BodyRun rewrite_body(NodeList& nodes, const PlacedFacts& facts, const BodyTarget& target,
                     const ir::ValueNames& interface, const std::vector<Pass>& passes,
                     const RewriteOptions& options, bool dry, Counters& counters, bool tidy = false,
                     const PassWatch& watch = {});
// The same with the facts by a source of its own (a subgraph's: Round::rewrite_subgraphs),
// and `reserved` names no new value may take (the enclosing scopes').
BodyRun rewrite_body(NodeList& nodes, const ir::MutableBody::FactSource& facts, const BodyTarget& target,
                     const ir::ValueNames& interface, const std::vector<Pass>& passes,
                     const RewriteOptions& options, bool dry, Counters& counters, bool tidy,
                     const PassWatch& watch, const std::vector<std::string>* reserved);

}  // namespace shapeprop::transform
