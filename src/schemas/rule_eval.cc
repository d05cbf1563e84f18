// Matching a rule's layouts against a node's facts and computing its outputs.
#include "schemas/rule_eval.h"

#include <algorithm>
#include <map>
#include <optional>

namespace shapeprop::schemas {

namespace {

using onnx::AttributeProto;

enum class Match { No, Yes, Unsure };

Match both(Match a, Match b) {
  if (a == Match::No || b == Match::No) return Match::No;
  return a == Match::Unsure || b == Match::Unsure ? Match::Unsure : Match::Yes;
}

// What the input patterns bound, and the attribute values in force.
struct Bindings {
  std::map<std::string, Dim> dims;
  std::map<std::string, std::vector<Dim>> sequences;
  std::map<std::string, int32_t> types;
  std::map<std::string, const AttributeProto*> attributes;  // declared ones with a value
};

// One value, named twice: keeps the more precise, fails when the two cannot be equal.
bool unify(Dim& bound, const Dim& d) {
  if (bound.equals(d) == false) return false;
  if (bound.is_unknown() || (d.is_constant() && !bound.is_constant())) bound = d;
  return true;
}

bool unify(std::map<std::string, Dim>& dims, const std::string& name, const Dim& d) {
  auto [it, fresh] = dims.try_emplace(name, d);
  return fresh || unify(it->second, d);
}

Dim evaluate(const Expr& e, const Bindings& b) {
  auto arg = [&](size_t i) { return evaluate(e.args[i], b); };
  switch (e.kind) {
    case Expr::Kind::Int: return Dim::constant(e.value);
    case Expr::Kind::Symbol: {
      auto it = b.dims.find(e.name);
      return it == b.dims.end() ? Dim::unknown() : it->second;
    }
    case Expr::Kind::Attribute: {
      auto it = b.attributes.find(e.name);
      if (it == b.attributes.end()) return Dim::unknown();
      const AttributeProto& a = *it->second;
      if (e.value < 0) return Dim::constant(a.i());
      return e.value < a.ints_size() ? Dim::constant(a.ints(static_cast<int>(e.value))) : Dim::unknown();
    }
    case Expr::Kind::Length: {
      // An attribute left out is an empty list (as ORT reads qkv_hidden_sizes).
      auto it = b.attributes.find(e.name);
      if (it == b.attributes.end()) return Dim::constant(0);
      const AttributeProto& a = *it->second;
      return Dim::constant(a.ints_size() + a.floats_size() + a.strings_size());
    }
    case Expr::Kind::Add: return arg(0) + arg(1);
    case Expr::Kind::Sub: return arg(0) - arg(1);
    case Expr::Kind::Mul: return arg(0) * arg(1);
    case Expr::Kind::Neg: return -arg(0);
    case Expr::Kind::Div: return Dim::floor_div(arg(0), arg(1));  // sizes: floor and trunc agree
    case Expr::Kind::Mod: return Dim::mod(arg(0), arg(1));
    case Expr::Kind::Max: return Dim::max(arg(0), arg(1));  // decided where sizes decide it
    case Expr::Kind::Min: return Dim::min(arg(0), arg(1));
  }
  return Dim::unknown();
}

std::optional<bool> holds(const Condition& c, const Bindings& b) {
  const Dim l = evaluate(c.lhs, b), r = evaluate(c.rhs, b);
  if (l.is_unknown() || r.is_unknown()) return std::nullopt;
  // x >= 0 for every value of the symbols (sizes), or x < 0 for every value.
  auto nonnegative = [](const Dim& x) -> std::optional<bool> {
    if (auto m = x.min_value(0); m && *m >= 0) return true;
    if (auto m = (-x - Dim::constant(1)).min_value(0); m && *m >= 0) return false;
    return std::nullopt;
  };
  switch (c.op) {
    case Condition::Op::Eq: return l.equals(r);
    case Condition::Op::Ne: {
      auto eq = l.equals(r);
      return eq ? std::optional<bool>(!*eq) : std::nullopt;
    }
    case Condition::Op::Le: return nonnegative(r - l);
    case Condition::Op::Ge: return nonnegative(l - r);
    case Condition::Op::Lt: return nonnegative(r - l - Dim::constant(1));
    case Condition::Op::Gt: return nonnegative(l - r - Dim::constant(1));
  }
  return std::nullopt;
}

// A dim pattern that is an expression other than a bare symbol: checked once everything
// is bound.
struct Deferred {
  const Expr* expr;
  Dim dim;
  std::string where;
};

struct Matcher {
  const OpRule* rule;
  Bindings b;
  std::vector<Deferred> deferred;
  std::string reason;  // why the layout does not fit

  Match no(std::string why) {
    if (reason.empty()) reason = std::move(why);
    return Match::No;
  }

  // Binds `patterns` against `dims` (a shape, or a value's elements).
  Match dims(const std::vector<DimPattern>& patterns, const std::vector<Dim>& dims, const std::string& what) {
    size_t fixed = 0;
    const DimPattern* variadic = nullptr;
    for (const auto& p : patterns) {
      if (p.kind == DimPattern::Kind::Variadic)
        variadic = &p;
      else
        ++fixed;
    }
    if (variadic ? dims.size() < fixed : dims.size() != fixed)
      return no(what + " has " + std::to_string(dims.size()) + " dims, not " + (variadic ? "at least " : "") +
                std::to_string(fixed));
    const size_t spread = dims.size() - fixed;  // how many dims the '*' takes
    size_t k = 0;
    for (const auto& p : patterns) {
      if (p.kind == DimPattern::Kind::Variadic) {
        std::vector<Dim> seq(dims.begin() + static_cast<std::ptrdiff_t>(k), dims.begin() + static_cast<std::ptrdiff_t>(k + spread));
        k += spread;
        if (p.name.empty()) continue;
        auto [it, fresh] = b.sequences.try_emplace(p.name, seq);
        if (fresh) continue;
        if (it->second.size() != seq.size()) return no(what + " does not have the dims *" + p.name + " stands for");
        for (size_t i = 0; i < seq.size(); ++i)
          if (!unify(it->second[i], seq[i])) return no(what + " does not have the dims *" + p.name + " stands for");
        continue;
      }
      const Dim& d = dims[k++];
      if (p.kind == DimPattern::Kind::Any) continue;
      if (p.expr.is_symbol()) {
        if (!unify(b.dims, p.expr.name, d)) return no(what + " dim " + std::to_string(k - 1) + " is " + d.str() + ", not " + b.dims[p.expr.name].str());
      } else {
        deferred.push_back({&p.expr, d, what + " dim " + std::to_string(k - 1)});
      }
    }
    return Match::Yes;
  }

  Match input(const Param& p, const Fact* f, size_t index) {
    const std::string what = "input " + std::to_string(index) + (p.empty ? "" : " (" + p.name + ")");
    if (p.empty) return f ? no(what + " must be left out") : Match::Yes;
    if (!f) return p.optional ? Match::Yes : no(what + " is required");
    if (f->other) return no(what + " is not a tensor");
    Match m = Match::Yes;
    if (f->elem_type == 0) {
      m = Match::Unsure;
    } else if (p.pattern.elem_type != 0) {
      if (f->elem_type != p.pattern.elem_type) return no(what + " is " + elem_type_name(f->elem_type) + ", not " + p.pattern.type_name);
    } else {
      const TypeConstraint* tc = rule->type(p.pattern.type_name);
      if (std::find(tc->allowed.begin(), tc->allowed.end(), f->elem_type) == tc->allowed.end())
        return no(what + " is " + elem_type_name(f->elem_type) + ", which type " + tc->name + " does not allow");
      auto [it, fresh] = b.types.try_emplace(p.pattern.type_name, f->elem_type);
      if (!fresh && it->second != f->elem_type)
        return no(what + " is " + elem_type_name(f->elem_type) + ", but " + tc->name + " is " + elem_type_name(it->second) + " already");
    }
    if (p.pattern.dims) {
      const bool constrains_rank = p.pattern.dims->size() != 1 || p.pattern.dims->front().kind != DimPattern::Kind::Variadic;
      if (f->shape) m = both(m, dims(*p.pattern.dims, *f->shape, what));
      else if (constrains_rank) m = both(m, Match::Unsure);
    }
    if (p.pattern.values && f->ints) {
      // Elements only bind (a value does not choose a layout): a mismatch binds nothing.
      Matcher trial = *this;
      if (trial.dims(*p.pattern.values, *f->ints, what + " value") == Match::Yes) *this = std::move(trial);
    }
    return m;
  }

  Match layout(const Layout& l, const std::vector<const Fact*>& inputs) {
    Match m = Match::Yes;
    for (size_t i = l.inputs.size(); i < inputs.size(); ++i)
      if (inputs[i]) return no("it takes " + std::to_string(l.inputs.size()) + " inputs, the node gives input " + std::to_string(i));
    for (size_t i = 0; i < l.inputs.size() && m != Match::No; ++i)
      m = both(m, input(l.inputs[i], i < inputs.size() ? inputs[i] : nullptr, i));
    if (m == Match::No) return m;
    for (const auto& d : deferred) {
      const Dim want = evaluate(*d.expr, b);
      if (want.equals(d.dim) == false) return no(d.where + " is " + d.dim.str() + ", not " + want.str());
    }
    for (const auto& g : l.guards) {
      auto h = holds(g, b);
      if (!h) m = both(m, Match::Unsure);
      else if (!*h) return no("a 'where' condition does not hold");
    }
    return m;
  }
};

std::optional<std::vector<Dim>> output_shape(const Param& p, const Bindings& b) {
  std::vector<Dim> shape;
  for (const auto& d : *p.pattern.dims) {
    switch (d.kind) {
      case DimPattern::Kind::Any: shape.push_back(Dim::unknown()); break;
      case DimPattern::Kind::Variadic: {
        auto it = b.sequences.find(d.name);
        if (it == b.sequences.end()) return std::nullopt;  // the input's rank is unknown
        shape.insert(shape.end(), it->second.begin(), it->second.end());
        break;
      }
      case DimPattern::Kind::Expr: {
        Dim v = evaluate(d.expr, b);
        if (auto c = v.as_constant(); c && *c < 0) v = Dim::unknown();  // a broken rule or a broken model
        shape.push_back(std::move(v));
        break;
      }
    }
  }
  return shape;
}

// A shape function's output: a 1-D shape value, or at least its length.
std::optional<std::vector<Dim>> shape_value(const Fact& f) {
  if (f.ints) {
    std::vector<Dim> dims = *f.ints;
    for (auto& d : dims)
      if (auto c = d.as_constant(); c && *c < 0) d = Dim::unknown();
    return dims;
  }
  if (f.shape && f.shape->size() == 1)
    if (auto n = (*f.shape)[0].as_constant()) return std::vector<Dim>(static_cast<size_t>(*n), Dim::unknown());
  return std::nullopt;
}

}  // namespace

Application apply_rule(const OpRule& rule, size_t num_outputs, const std::vector<const Fact*>& inputs,
                       const std::vector<const AttributeProto*>& attributes, const ShapeFunctionEvaluator& evaluate_function) {
  Application out;
  out.outputs.resize(num_outputs);

  Bindings base;
  std::vector<AttributeProto> attribute_values;  // for shape functions: every declared attribute with a value
  for (const auto& decl : rule.attributes)
    if (decl.default_value) base.attributes[decl.name] = &*decl.default_value;
  for (const AttributeProto* a : attributes) {
    const AttributeDecl* decl = rule.attribute(a->name());
    if (!decl) {
      out.problems.push_back("attribute '" + a->name() + "' is not an attribute of " + rule.versioned_name() +
                             " (rule at " + rule.where.str() + ")");
      // A version of an ONNX op read from its Changelog: an attribute it does not know may
      // change the outputs, so they are not inferred.
      if (rule.since) return out;
      continue;
    }
    if (a->type() != decl->type) {
      out.problems.push_back("attribute '" + a->name() + "' of " + rule.versioned_name() + " has the wrong type");
      if (rule.since) return out;  // as for an attribute it does not know
      base.attributes.erase(a->name());
      continue;
    }
    base.attributes[a->name()] = a;
  }
  for (const auto& [name, a] : base.attributes) attribute_values.push_back(*a);

  std::vector<std::string> reasons;
  for (const Layout& l : rule.layouts) {
    Matcher m{&rule, base, {}, {}};
    const Match match = m.layout(l, inputs);
    if (match == Match::No) {
      reasons.push_back("'" + l.label + "': " + m.reason);
      continue;
    }
    if (match == Match::Unsure) return out;  // the node may be in this layout; nothing is certain
    out.layout = &l;
    std::vector<Fact> shaped;
    if (l.shape_function) {
      std::vector<const Fact*> function_inputs;
      for (const auto& name : l.shape_function->input())
        for (size_t i = 0; i < l.inputs.size(); ++i)
          if (l.inputs[i].name == name) function_inputs.push_back(i < inputs.size() ? inputs[i] : nullptr);
      shaped = evaluate_function(*l.shape_function, function_inputs, attribute_values);
    }
    for (size_t j = 0; j < num_outputs && j < l.outputs.size(); ++j) {
      const Param& p = l.outputs[j];
      if (p.pattern.type_name == "_") continue;  // stated as unknown
      Fact& f = out.outputs[j];
      if (p.pattern.elem_type != 0) {
        f.elem_type = p.pattern.elem_type;
      } else if (auto t = m.b.types.find(p.pattern.type_name); t != m.b.types.end()) {
        f.elem_type = t->second;
      } else if (const auto& allowed = rule.type(p.pattern.type_name)->allowed; allowed.size() == 1) {
        f.elem_type = allowed.front();
      }
      if (p.pattern.dims) {
        f.shape = output_shape(p, m.b);
      } else if (l.shape_function) {
        const auto& names = l.shape_function->output();
        const auto at = static_cast<size_t>(std::find(names.begin(), names.end(), p.name) - names.begin());
        if (at < shaped.size()) f.shape = shape_value(shaped[at]);
      }
    }
    if (num_outputs > l.outputs.size())
      out.problems.push_back(rule.versioned_name() + " has " + std::to_string(l.outputs.size()) + " outputs in layout '" +
                             l.label + "', the node asks for " + std::to_string(num_outputs));
    return out;
  }
  std::string why;
  for (const auto& r : reasons) why += (why.empty() ? "" : "; ") + r;
  out.problems.push_back("no layout of the rule for " + rule.versioned_name() + " (" + rule.where.str() +
                         ") fits this node: " + why);
  return out;
}

}  // namespace shapeprop::schemas
