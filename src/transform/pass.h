// What a body pass sees (passes.def lists them): one body on the mutable IR, the options,
// and where what it finds goes. A pass matches patterns on the body as it stands (const)
// and hands each match's rewrite to apply(): a dry run, which only asks whether some
// rewrite would apply, stops at the first match and runs none.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ir/mutable_body.h"
#include "shapeprop/passes.h"

namespace shapeprop::transform {

using ir::MutableBody;
using ir::ValueId;
using NodeId = MutableBody::NodeId;
inline constexpr NodeId kNone = MutableBody::kNone;

struct RewriteOptions {
  // Symbolic dims are at least 1 (InferOptions::assume_positive_dims).
  bool assume_positive_dims = true;
  // The version of the default ONNX domain where the body stands (what new nodes may use).
  int64_t onnx_opset = 0;
  // Where rewrites that rely on the assumption say so (--debug-analysis), each line
  // starting with `where` (the body); may be null.
  std::vector<std::string>* notes = nullptr;
  // The body's place, made only when a message is written: a context's description takes
  // long to build, and is rarely read.
  class Where {
   public:
    Where() = default;
    explicit Where(std::string text) : text_(std::move(text)), made_(true) {}
    explicit Where(std::function<std::string()> make) : make_(std::move(make)) {}
    const std::string& str() const {
      if (!made_) {
        text_ = make_ ? make_() : std::string();
        made_ = true;
      }
      return text_;
    }

   private:
    mutable std::string text_;
    mutable bool made_ = false;
    std::function<std::string()> make_;
  };
  Where where;
};

class PassContext {
 public:
  PassContext(MutableBody& body, const RewriteOptions& options, Counters& counters, bool dry)
      : body_(body), options_(options), counters_(counters), dry_(dry) {}

  MutableBody& body() { return body_; }
  const MutableBody& body() const { return body_; }
  const RewriteOptions& options() const { return options_; }
  bool dry() const { return dry_; }
  // Whether a node of one of these ops may be in the body (MutableBody::may_hold): a pass
  // that rewrites only around them returns at once where none is.
  bool may_hold(std::initializer_list<std::string_view> ops) const {
    for (std::string_view op : ops)
      if (body_.may_hold(op)) return true;
    return false;
  }

  // A pattern matched. In a dry run that is all: stop() is true from now on. Otherwise
  // `rewrite` runs, and `counter` counts it when it changed something.
  template <class Rewrite>
  bool apply(Counter counter, Rewrite&& rewrite) {
    if (dry_) {
      found_ = true;
      return true;
    }
    if (!rewrite()) return false;
    ++counters_[counter];
    changed_ = true;
    return true;
  }
  // The same for a rewrite that counts what it does itself (count()), true when it changed
  // something.
  template <class Rewrite>
  bool apply(Rewrite&& rewrite) {
    if (dry_) {
      found_ = true;
      return true;
    }
    if (!rewrite()) return false;
    changed_ = true;
    return true;
  }
  void count(Counter counter) { ++counters_[counter]; }
  // A dry run found something: the pass may stop.
  bool stop() const { return found_; }
  // Some rewrite ran (in a dry run: would run).
  bool changed() const { return changed_ || found_; }
  // Says that a rewrite holds only because symbolic dims are at least 1.
  void note_assumption(const std::string& what);

 private:
  MutableBody& body_;
  const RewriteOptions& options_;
  Counters& counters_;
  const bool dry_;
  bool found_ = false, changed_ = false;
};

// The loop of a pass that rewrites where a pattern matches a node: `match(id)` runs on each
// node in order (it gives an optional or a bool, empty or false where nothing matches),
// and each match m is handed to apply() as `rewrite(id, m)`, counted by `counter`. A dry
// run stops at the first match.
template <class Match, class Rewrite>
bool rewrite_matches(PassContext& ctx, Counter counter, Match&& match, Rewrite&& rewrite) {
  MutableBody& body = ctx.body();
  for (NodeId id = body.first(); id != kNone && !ctx.stop(); id = body.next(id)) {
    auto m = match(id);
    if (!m) continue;
    ctx.apply(counter, [&] { return rewrite(id, m); });
  }
  return ctx.changed();
}

using BodyPassFn = bool (*)(PassContext&);

// The rewrite passes, each in the file its passes.def line names.
#define SHAPEPROP_BODY_PASS(ID, NAME, KIND, FUNCTION, FILE, DESCRIPTION) bool FUNCTION(PassContext& ctx);
#include "shapeprop/passes.def"

}  // namespace shapeprop::transform
