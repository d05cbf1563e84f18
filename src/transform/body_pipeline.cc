// Running the rewrite passes over one body: the body on the mutable IR, each pass in turn,
// rounds until a fixed point.
#include "body_pipeline.h"

#include <algorithm>

namespace shapeprop::transform {

void PassContext::note_assumption(const std::string& what) {
  if (!options_.notes) return;
  std::string line = options_.where.empty() ? what : options_.where + ": " + what;
  if (std::find(options_.notes->begin(), options_.notes->end(), line) == options_.notes->end())
    options_.notes->push_back(std::move(line));
}

BodyPassFn body_pass(Pass pass) {
  switch (pass) {
    case Pass::ShareInitializers: return share_equal_initializers;
    case Pass::CastElim: return remove_redundant_casts;
    case Pass::MatMulBroadcast: return unflatten_matmuls;
    case Pass::Gemm: return form_gemms;
    case Pass::ConvBn: return fuse_conv_batchnorm;
    case Pass::ConstFold: return fold_small_constants;
    case Pass::SplitPatterns: return rewrite_sequences_and_splits;
    case Pass::ShapeGlue: return simplify_shape_inputs;
    case Pass::Peepholes: return apply_peepholes;
    case Pass::DropoutElim: return eliminate_dropouts;
    case Pass::ConcatEmpties: return drop_empty_concat_inputs;
    case Pass::MinMaxToClip: return min_max_to_clip;
    case Pass::ClipFusion: return fuse_clips;
    case Pass::NeutralOps: return remove_neutral_ops;
    case Pass::ScatterElim: return remove_overwriting_scatters;
    case Pass::RnnStates: return omit_zero_rnn_states;
    case Pass::UnusedOutputs: return drop_unused_outputs;
    case Pass::ExpandElim: return remove_broadcast_expands;
    case Pass::HardActivations: return fuse_hard_activations;
    case Pass::Cse: return merge_common_subexpressions;
    default: return nullptr;
  }
}

BodyRun rewrite_body(NodeList& nodes, const PlacedFacts& facts, const BodyTarget& target,
                     const ir::ValueNames& interface, const std::vector<Pass>& passes,
                     const RewriteOptions& options, bool dry, Counters& counters, bool tidy, int max_rounds) {
  MutableBody body(nodes, facts.source(), target.main_graph, interface);
  BodyRun run;
  tidy = tidy && !dry;
  auto clean = [&body] {
    body.collapse_identities();
    body.remove_dead_nodes();
  };
  if (tidy) clean();
  auto step = [&](Pass p) {
    PassContext ctx(body, options, counters, dry);
    return body_pass(p)(ctx);
  };
  std::vector<Pass> rounds;
  for (Pass p : passes) {
    if (p != Pass::ShareInitializers) {
      rounds.push_back(p);
      continue;
    }
    run.changed = step(p) || run.changed;  // once: what it shares stays shared
    if (run.changed && dry) return run;
  }
  for (int round = 0; round < max_rounds; ++round) {
    std::optional<Pass> changed_by;
    for (Pass p : rounds) {
      if (!step(p)) continue;
      changed_by = p;
      if (dry) {
        run.changed = true;
        return run;
      }
    }
    if (!changed_by) break;
    run.changed = true;
    if (round + 1 == max_rounds) run.still_changing = changed_by;
  }
  if (tidy && run.changed) clean();
  if (!dry) body.commit();
  if (tidy && target.main_graph) {
    body.remove_unread_initializers();
    run.initializers_tidied = true;
  }
  return run;
}

}  // namespace shapeprop::transform
