// Running the rewrite passes over one body: the body on the mutable IR, each pass in turn,
// rounds until a fixed point.
#include "body_pipeline.h"

#include <algorithm>
#include <array>
#include <cstdint>

namespace shapeprop::transform {

void PassContext::note_assumption(const std::string& what) {
  if (!options_.notes) return;
  const std::string& where = options_.where.str();
  std::string line = where.empty() ? what : where + ": " + what;
  if (std::find(options_.notes->begin(), options_.notes->end(), line) == options_.notes->end())
    options_.notes->push_back(std::move(line));
}

namespace {

// Every pass of passes.def by its id: its function where it is a SHAPEPROP_BODY_PASS.
constexpr BodyPassFn kBodyPasses[] = {
#define SHAPEPROP_PASS(ID, NAME, KIND, FILE, DESCRIPTION) nullptr,
#define SHAPEPROP_BODY_PASS(ID, NAME, KIND, FUNCTION, FILE, DESCRIPTION) FUNCTION,
#include "shapeprop/passes.def"
};

// Only the transform's own passes may lack a function: the module passes, and fold and dce,
// which work on node lists (fold_body.h). A rewrite listed with SHAPEPROP_PASS would be
// found by --passes and then do nothing.
#define SHAPEPROP_PASS(ID, NAME, KIND, FILE, DESCRIPTION)                                       \
  static_assert(PassKind::KIND == PassKind::Module || Pass::ID == Pass::Fold || Pass::ID == Pass::Dce, \
                "passes.def: the body pass '" NAME "' names no function: list it with SHAPEPROP_BODY_PASS");
#define SHAPEPROP_BODY_PASS(ID, NAME, KIND, FUNCTION, FILE, DESCRIPTION)               \
  static_assert(PassKind::KIND != PassKind::Module,                                      \
                "passes.def: '" NAME "' is a module pass: the transform runs those itself");
#include "shapeprop/passes.def"

}  // namespace

BodyPassFn body_pass(Pass pass) { return kBodyPasses[static_cast<size_t>(pass)]; }

BodyRun rewrite_body(NodeList& nodes, const PlacedFacts& facts, const BodyTarget& target,
                     const ir::ValueNames& interface, const std::vector<Pass>& passes,
                     const RewriteOptions& options, bool dry, Counters& counters, bool tidy, const PassWatch& watch) {
  return rewrite_body(nodes, facts.source(), target, interface, passes, options, dry, counters, tidy, watch, nullptr);
}

BodyRun rewrite_body(NodeList& nodes, const ir::MutableBody::FactSource& facts, const BodyTarget& target,
                     const ir::ValueNames& interface, const std::vector<Pass>& passes,
                     const RewriteOptions& options, bool dry, Counters& counters, bool tidy, const PassWatch& watch,
                     const std::vector<std::string>* reserved) {
  MutableBody body(nodes, facts, target.main_graph, interface);
  body.reserve_names(reserved);
  BodyRun run;
  tidy = tidy && !dry;
  PassTimes* const times = dry ? nullptr : watch.times;
  const bool watch_after = !dry && watch.after_first;
  auto clean = [&body, times] {
    PassClock clock(times, Pass::Dce);
    body.collapse_identities();
    body.remove_dead_nodes();
  };
  if (tidy) {
    clean();
    if (watch_after) watch.after_first(Pass::Dce, body);
  }
  // A pass is a function of the body (its nodes, values and facts) and the options: one
  // that found nothing would find nothing again on the same body. So in the rounds after
  // the first, a pass runs only where some pass changed the body since it last found
  // nothing (`changes` counts the passes that changed it): the round that confirms the
  // fixed point runs only the passes up to the last one that changed something.
  uint64_t changes = 0;
  std::array<uint64_t, kPassCount> found_nothing_at;  // by pass: `changes` then
  found_nothing_at.fill(UINT64_MAX);
  auto step = [&](Pass p, bool first) {
    uint64_t& idle_at = found_nothing_at[static_cast<size_t>(p)];
    if (!first && idle_at == changes) return false;
    bool changed;
    {
      PassClock clock(times, p);
      PassContext ctx(body, options, counters, dry);
      changed = body_pass(p)(ctx);
    }
    if (first && watch_after) watch.after_first(p, body);
    if (changed) {
      ++changes;
    } else {
      idle_at = changes;
    }
    return changed;
  };
  std::vector<Pass> rounds;
  for (Pass p : passes) {
    if (p != Pass::ShareInitializers) {
      rounds.push_back(p);
      continue;
    }
    run.changed = step(p, true) || run.changed;  // once: what it shares stays shared
    if (run.changed && dry) return run;
  }
  for (int round = 0; round < kMaxBodyRounds; ++round) {
    std::optional<Pass> changed_by;
    for (Pass p : rounds) {
      if (!step(p, round == 0)) continue;
      changed_by = p;
      if (dry) {
        run.changed = true;
        return run;
      }
    }
    if (!changed_by) break;
    run.changed = true;
    if (round + 1 == kMaxBodyRounds) run.still_changing = changed_by;
  }
  if (tidy && run.changed) clean();
  if (!dry) run.nodes_changed = body.commit();
  if (tidy && target.main_graph) {
    PassClock clock(times, Pass::Dce);
    body.remove_unread_initializers();
    run.initializers_tidied = true;
  }
  return run;
}

}  // namespace shapeprop::transform
