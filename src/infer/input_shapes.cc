// Deployment shapes (shapeprop/input_shapes.h): bindings, input shapes, renames and names
// written into the main graph's declarations before the analysis; the names of the
// result's outputs; and which values of a result stay dynamic, and why.
#include "shapeprop/input_shapes.h"

#include <algorithm>
#include <cctype>
#include <deque>
#include <memory>
#include <functional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "infer/declared_type.h"
#include "infer/dim_texts.h"
#include "shapeprop/dim.h"
#include "shapeprop/function_id.h"
#include "support/dim_params.h"
#include "support/subgraphs.h"
#include "support/type_walk.h"

namespace shapeprop {

namespace {

using onnx::GraphProto;
using onnx::TensorShapeProto;
using onnx::ValueInfoProto;

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// "a, b, c" (at most `most`, then ", ...").
std::string listing(const std::set<std::string>& names, size_t most = 12) {
  std::string out;
  size_t n = 0;
  for (const auto& s : names) {
    if (n++ == most) return out + ", ...";
    out += (out.empty() ? "" : ", ") + s;
  }
  return out.empty() ? "none" : out;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// `name` as an identifier: other characters become '_', and a leading digit gets one.
std::string identifier_of(const std::string& name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
  return out;
}

// `base`, or base_2, base_3, ... : the first that `taken` does not hold (then taken).
std::string unique_name(const std::string& base, std::set<std::string>& taken) {
  std::string name = base;
  for (int k = 2; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

const TensorShapeProto* tensor_shape(const ValueInfoProto& vi) {
  return vi.type().has_tensor_type() && vi.type().tensor_type().has_shape() ? &vi.type().tensor_type().shape() : nullptr;
}

// A main-graph value_info entry that IR < 10 exporters wrote for a value inside a function
// ("domain::function/value"): its dims name sizes of one call, not the graph's.
bool legacy_function_entry(const std::string& name, const std::set<std::pair<std::string, std::string>>& functions) {
  const auto sep = name.find("::");
  if (sep == std::string::npos) return false;
  const auto slash = name.find('/', sep + 2);
  return slash != std::string::npos &&
         functions.count({FunctionId::canonical_domain(name.substr(0, sep)), name.substr(sep + 2, slash - sep - 2)});
}

// Every declaration of the main graph's scope: its inputs (first), outputs, value_info but
// the legacy function entries, and its subgraphs' inputs, outputs and value_info, at any
// depth. `input` says whether the entry is a graph input (whose dim_params are names).
void for_each_declaration(onnx::ModelProto& model, const std::function<void(ValueInfoProto&, bool input)>& fn) {
  std::set<std::pair<std::string, std::string>> functions;
  for (const auto& f : model.functions()) functions.insert({FunctionId::canonical_domain(f.domain()), f.name()});
  GraphProto& main = *model.mutable_graph();
  for (auto& vi : *main.mutable_input()) fn(vi, true);
  for (auto& vi : *main.mutable_output()) fn(vi, false);
  for (auto& vi : *main.mutable_value_info())
    if (!legacy_function_entry(vi.name(), functions)) fn(vi, false);
  std::vector<GraphProto*> graphs;
  for (auto& n : *main.mutable_node()) for_each_subgraph(n, [&graphs](GraphProto& g) { graphs.push_back(&g); });
  while (!graphs.empty()) {
    GraphProto* g = graphs.back();
    graphs.pop_back();
    for (auto* list : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()})
      for (auto& vi : *list) fn(vi, false);
    for (auto& n : *g->mutable_node()) for_each_subgraph(n, [&graphs](GraphProto& sub) { graphs.push_back(&sub); });
  }
}

// The dim_params of the graph's inputs (or outputs).
std::set<std::string> dim_names(const google::protobuf::RepeatedPtrField<ValueInfoProto>& list) {
  std::set<std::string> out;
  for (const auto& vi : list)
    for_each_shape(vi.type(), [&out](const TensorShapeProto& shape) {
      for (const auto& d : shape.dim())
        if (d.has_dim_param() && !d.dim_param().empty()) out.insert(d.dim_param());
    });
  return out;
}

}  // namespace

bool InputShapes::binds() const {
  if (!dims.empty()) return true;
  for (const auto& [input, shape] : inputs)
    for (const auto& d : shape)
      if (d) return true;
  return false;
}

Result<AppliedShapes> apply_input_shapes(onnx::ModelProto& model, const InputShapes& shapes) {
  const GraphProto& g = model.graph();
  const std::set<std::string> in_inputs = dim_names(g.input());
  std::set<std::string> names = in_inputs;
  for (const auto& n : dim_names(g.output())) names.insert(n);
  auto unknown_name = [&](const std::string& name) {
    return Diagnostic::error("no input or output of the graph has a dim named " + quoted(name) + " (its dims: " +
                             listing(names) + ")");
  };

  std::map<std::string, int64_t> bound;
  auto bind = [&](const std::string& name, int64_t value, const std::string& where) -> std::optional<Diagnostic> {
    auto [it, fresh] = bound.try_emplace(name, value);
    if (fresh || it->second == value) return std::nullopt;
    return Diagnostic::error(where + "dim " + quoted(name) + " is given two values, " + std::to_string(it->second) +
                             " and " + std::to_string(value));
  };
  for (const auto& [name, value] : shapes.dims) {
    if (!names.count(name)) return unknown_name(name);
    if (value < 0) return Diagnostic::error("dim " + quoted(name) + " cannot be " + std::to_string(value));
    if (auto e = bind(name, value, "")) return *e;
  }

  // --input-shape: values for anonymous dims by input (`direct`), and bindings of names.
  std::map<std::string, std::vector<std::optional<int64_t>>> direct;
  for (const auto& [input, dims] : shapes.inputs) {
    const ValueInfoProto* vi = nullptr;
    std::set<std::string> inputs;
    for (const auto& in : g.input()) {
      inputs.insert(in.name());
      if (in.name() == input) vi = &in;
    }
    if (!vi) return Diagnostic::error("the graph has no input " + quoted(input) + " (its inputs: " + listing(inputs) + ")");
    const std::string where = "input " + quoted(input) + ": ";
    if (direct.count(input)) return Diagnostic::error(where + "its shape is given twice");
    if (!vi->type().has_tensor_type())
      return Diagnostic::error(where + "a shape is given, but it is not a tensor");
    for (const auto& d : dims)
      if (d && *d < 0) return Diagnostic::error(where + "a dim cannot be " + std::to_string(*d));
    const TensorShapeProto* shape = tensor_shape(*vi);
    if (shape && static_cast<size_t>(shape->dim_size()) != dims.size())
      return Diagnostic::error(where + "it has rank " + std::to_string(shape->dim_size()) + ", and the shape given has " +
                               std::to_string(dims.size()) + " dim" + (dims.size() == 1 ? "" : "s"));
    auto& mine = direct[input];
    mine.assign(dims.size(), std::nullopt);
    for (size_t i = 0; i < dims.size(); ++i) {
      if (!dims[i]) continue;
      const int64_t v = *dims[i];
      const auto* d = shape ? &shape->dim(static_cast<int>(i)) : nullptr;
      if (d && d->has_dim_value()) {
        if (d->dim_value() != v)
          return Diagnostic::error(where + "dim " + std::to_string(i) + " is " + std::to_string(d->dim_value()) +
                                   ", and the shape given says " + std::to_string(v));
      } else if (d && d->has_dim_param() && !d->dim_param().empty()) {
        if (auto it = bound.find(d->dim_param()); it != bound.end() && it->second != v)
          return Diagnostic::error(where + "dim " + std::to_string(i) + " is " + quoted(d->dim_param()) +
                                   ", which is bound to " + std::to_string(it->second) + ", and the shape given says " +
                                   std::to_string(v));
        bound.emplace(d->dim_param(), v);
      } else {
        mine[i] = v;
      }
    }
  }

  for (const auto& [name, range] : shapes.ranges) {
    if (!in_inputs.count(name)) {
      if (names.count(name))
        return Diagnostic::error("dim " + quoted(name) + " is an output's only: a range bounds an input's dim");
      return unknown_name(name);
    }
    if (range.min < 0 || range.min > range.max)
      return Diagnostic::error("the range of dim " + quoted(name) + " is empty or negative (" + std::to_string(range.min) +
                               ".." + std::to_string(range.max) + ")");
    if (auto it = bound.find(name); it != bound.end())
      return Diagnostic::error("dim " + quoted(name) + " is given both a value (" + std::to_string(it->second) +
                               ") and a range");
  }

  // Names the new ones must keep apart from: every dim_param of the model (the graph's
  // scope and the functions'), so that no new name equates two sizes.
  std::set<std::string> taken = declared_dim_params(model);
  std::map<std::string, std::string> renames;
  std::set<std::string> new_names;
  for (const auto& [from, to] : shapes.renames) {
    if (!names.count(from)) return unknown_name(from);
    if (bound.count(from))
      return Diagnostic::error("dim " + quoted(from) + " is bound to " + std::to_string(bound.at(from)) +
                               ": no name is left to rename");
    if (!renames.emplace(from, to).second) return Diagnostic::error("dim " + quoted(from) + " is renamed twice");
    if (!is_identifier(to) || infer::is_minted_name(to))
      return Diagnostic::error("dim " + quoted(from) + " cannot be renamed " + quoted(to) +
                               ": a new name is an identifier ([A-Za-z_][A-Za-z0-9_]*) not spelled like a fresh "
                               "symbol (dyn__N, unk__N)");
    if (taken.count(to) || !new_names.insert(to).second)
      return Diagnostic::error("dim " + quoted(from) + " cannot be renamed " + quoted(to) + ": the model " +
                               (taken.count(to) ? "already has a dim of that name" : "gets that name for another dim") +
                               ", and one name is one size");
  }

  AppliedShapes applied;
  for (const auto& [name, value] : bound) applied.bound.emplace_back(name, value);
  for (const auto& [name, range] : shapes.ranges) {
    auto it = renames.find(name);
    applied.ranges.emplace_back(it == renames.end() ? name : it->second, range);
  }
  std::sort(applied.ranges.begin(), applied.ranges.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [from, to] : renames) applied.renamed.emplace_back(from, to);

  // Nothing can fail from here on: the model changes.
  GraphProto& main = *model.mutable_graph();
  for (auto& vi : *main.mutable_input()) {
    auto it = direct.find(vi.name());
    if (it == direct.end()) continue;
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() == 0)
      for (size_t i = 0; i < it->second.size(); ++i) shape->add_dim();
    for (size_t i = 0; i < it->second.size(); ++i)
      if (it->second[i]) shape->mutable_dim(static_cast<int>(i))->set_dim_value(*it->second[i]);
  }
  for (const auto& n : new_names) taken.insert(n);
  if (shapes.name_dims)
    for (auto& vi : *main.mutable_input())
      for_each_shape(*vi.mutable_type(), [&](TensorShapeProto& shape) {
        for (int i = 0; i < shape.dim_size(); ++i) {
          auto* d = shape.mutable_dim(i);
          if (d->has_dim_value() || (d->has_dim_param() && !d->dim_param().empty())) continue;
          const std::string name = unique_name(identifier_of(vi.name()) + "_" + std::to_string(i), taken);
          d->set_dim_param(name);
          applied.named.push_back({vi.name(), static_cast<size_t>(i), name});
        }
      });

  if (bound.empty() && renames.empty()) return applied;
  // A text of a declaration inside the graph that reads as an expression of the renamed
  // or bound sizes ("batch*seq", as torch writes it) is that expression of their new
  // names or values; the inputs' dim_params are names only.
  const Dim::SymbolMap to = [&](const std::string& s) -> std::optional<Dim> {
    if (auto b = bound.find(s); b != bound.end()) return Dim::constant(b->second);
    if (auto r = renames.find(s); r != renames.end()) return Dim::symbol(r->second);
    return std::nullopt;
  };
  for_each_declaration(model, [&](ValueInfoProto& vi, bool input) {
    for_each_shape(*vi.mutable_type(), [&](TensorShapeProto& shape) {
      for (auto& d : *shape.mutable_dim()) {
        if (!d.has_dim_param() || d.dim_param().empty()) continue;
        const std::string& p = d.dim_param();
        if (auto b = bound.find(p); b != bound.end()) {
          d.set_dim_value(b->second);
        } else if (auto r = renames.find(p); r != renames.end()) {
          d.set_dim_param(r->second);
        } else if (!input) {
          const Dim e = infer::declared_expression(p);
          if (e.is_unknown() || e.is_symbol()) continue;
          const Dim after = e.substitute(to);
          if (after == e) continue;
          if (auto c = after.as_constant(); c && *c >= 0)
            d.set_dim_value(*c);
          else if (!after.is_unknown() && !after.is_constant())
            d.set_dim_param(after.str());
          else
            d.clear_dim_param();
        }
      }
    });
  });
  return applied;
}

DeclaredOutputDims declared_output_dims(const onnx::ModelProto& model) {
  DeclaredOutputDims out;
  for (const auto& vi : model.graph().output()) {
    auto& dims = out.emplace_back();
    if (const TensorShapeProto* shape = tensor_shape(vi))
      for (const auto& d : shape->dim()) dims.push_back(d.has_dim_param() ? d.dim_param() : std::string());
  }
  return out;
}

std::vector<AppliedShapes::Named> name_output_dims(onnx::ModelProto& model, const DeclaredOutputDims& declared) {
  const std::set<std::string> inputs = dim_names(model.graph().input());
  std::set<std::string> taken = declared_dim_params(model);
  std::map<std::string, std::string> given;  // a written text, and the name it gets
  std::vector<AppliedShapes::Named> named;
  auto& outputs = *model.mutable_graph()->mutable_output();
  for (int k = 0; k < outputs.size(); ++k) {
    auto& vi = outputs[k];
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) continue;
    auto& shape = *vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int i = 0; i < shape.dim_size(); ++i) {
      auto& d = *shape.mutable_dim(i);
      if (d.has_dim_value()) continue;
      const std::string text = d.has_dim_param() ? d.dim_param() : std::string();
      // A plain name stays: an input's, or one the model itself gave.
      if (inputs.count(text) || (is_identifier(text) && !infer::is_minted_name(text))) continue;
      std::string name;
      if (auto it = given.find(text); !text.empty() && it != given.end()) {
        name = it->second;
      } else {
        const size_t o = static_cast<size_t>(k), a = static_cast<size_t>(i);
        const std::string mine = o < declared.size() && a < declared[o].size() ? declared[o][a] : std::string();
        if (is_identifier(mine) && !infer::is_minted_name(mine) && !inputs.count(mine) && !taken.count(mine)) {
          name = mine;
          taken.insert(name);
        } else {
          name = unique_name(identifier_of(vi.name()) + "_" + std::to_string(i), taken);
        }
        if (!text.empty()) given.emplace(text, name);
      }
      d.set_dim_param(name);
      named.push_back({vi.name(), static_cast<size_t>(i), name});
    }
  }
  // The texts no longer written leave the model's lists of shapeprop's own.
  if (!named.empty()) infer::DimTexts(model).record_in(model);
  return named;
}

namespace {

// One body of the result (the main graph, a subgraph, a function): its values' types and
// producers, for static_shapes.
struct BodyTypes {
  std::string where;
  const BodyTypes* outer = nullptr;
  std::unordered_map<std::string, const onnx::TypeProto*> types;  // declared here
  std::unordered_map<std::string, const onnx::NodeProto*> producer;
  std::set<std::string> inputs;

  const BodyTypes* owner(const std::string& name) const {
    for (const BodyTypes* b = this; b; b = b->outer)
      if (b->types.count(name) || b->producer.count(name) || b->inputs.count(name)) return b;
    return nullptr;
  }
};

bool static_tensor(const onnx::TypeProto::Tensor& t) {
  if (t.elem_type() == 0 || !t.has_shape()) return false;
  return std::all_of(t.shape().dim().begin(), t.shape().dim().end(), [](const auto& d) { return d.has_dim_value(); });
}

// Fully static: a tensor with an element type and numbers for dims; a sequence or an
// optional of one (a sequence's length is no part of its type).
bool static_type(const onnx::TypeProto* t) {
  if (!t) return false;
  switch (t->value_case()) {
    case onnx::TypeProto::kTensorType: return static_tensor(t->tensor_type());
    case onnx::TypeProto::kSequenceType: return static_type(&t->sequence_type().elem_type());
    case onnx::TypeProto::kOptionalType: return static_type(&t->optional_type().elem_type());
    default: return false;
  }
}

std::string type_text(const onnx::TypeProto* t) { return t ? infer::type_text(*t) : "?"; }

// What a graph input leaves dynamic: "dim 1 'seq' is not bound".
std::string input_why(const onnx::TypeProto* t) {
  if (!t || !t->has_tensor_type()) return "its type is not a tensor's";
  const auto& tt = t->tensor_type();
  if (!tt.has_shape()) return "its rank is not given";
  for (int i = 0; i < tt.shape().dim_size(); ++i) {
    const auto& d = tt.shape().dim(i);
    if (d.has_dim_value()) continue;
    const std::string dim = "dim " + std::to_string(i);
    return d.has_dim_param() && !d.dim_param().empty() ? dim + " " + quoted(d.dim_param()) + " is not bound"
                                                        : dim + " has neither a value nor a name";
  }
  return "its element type is not given";
}

// The first of the graph inputs' symbols (`open`) that a dim of `t` mentions, alone or in
// an expression ("seq", "8*seq", torch's "seq*8").
std::optional<std::string> open_dim(const onnx::TypeProto* t, const std::set<std::string>& open) {
  if (!t || open.empty()) return std::nullopt;
  std::optional<std::string> found;
  for_each_shape(*t, [&](const TensorShapeProto& shape) {
    for (const auto& d : shape.dim()) {
      if (found || !d.has_dim_param()) continue;
      if (open.count(d.dim_param())) {
        found = d.dim_param();
        continue;
      }
      for (const auto& s : infer::declared_expression(d.dim_param()).symbols())
        if (!found && open.count(s)) found = s;
    }
  });
  return found;
}

// The first fresh symbol of a data-dependent size (dyn__N) a dim of `t` mentions.
std::optional<std::string> fresh_dim(const onnx::TypeProto* t) {
  std::optional<std::string> found;
  if (t)
    for_each_shape(*t, [&](const TensorShapeProto& shape) {
      for (const auto& d : shape.dim())
        if (!found && d.has_dim_param())
          for (const auto& s : Dim::parse(d.dim_param()).symbols())
            if (!found && Dim::is_fresh_symbol(s)) found = s;
    });
  return found;
}

// Ops whose output's size their inputs' values decide, or the data.
bool data_dependent(const onnx::NodeProto& n) {
  static const std::set<std::string> ops = {"NonZero", "Unique", "Compress", "NonMaxSuppression", "TopK",
                                             "StringSplit", "Loop", "Scan", "If", "SplitToSequence",
                                             "SequenceConstruct", "SequenceInsert", "SequenceErase"};
  return FunctionId::is_default_domain(n.domain()) && ops.count(n.op_type());
}

std::string node_text(const onnx::NodeProto& n) {
  return "node " + quoted(n.name().empty() ? n.output(0) : n.name()) + " (" + n.op_type() + ")";
}
std::string node_why(const onnx::NodeProto& n) {
  return data_dependent(n) ? "its size depends on the data" : "the analysis does not know its size";
}

}  // namespace

StaticShapes static_shapes(const onnx::ModelProto& model) {
  StaticShapes out;
  const std::set<std::string> open_inputs = dim_names(model.graph().input());
  std::vector<std::unique_ptr<BodyTypes>> bodies;  // kept while their subgraphs look outward
  struct Work {
    const GraphProto* graph = nullptr;
    const onnx::FunctionProto* function = nullptr;
    const BodyTypes* outer = nullptr;
    std::string where;
  };
  // One body and, after it, its subgraphs at any depth (a queue: the model's order).
  auto walk = [&](Work first) {
    std::deque<Work> work{std::move(first)};
    while (!work.empty()) {
      const Work w = std::move(work.front());
      work.pop_front();
      bodies.push_back(std::make_unique<BodyTypes>());
      BodyTypes& body = *bodies.back();
      body.where = w.where;
      body.outer = w.outer;
      const auto& nodes = w.graph ? w.graph->node() : w.function->node();
      auto declare = [&body](const ValueInfoProto& vi) {
        if (vi.has_type()) body.types.emplace(vi.name(), &vi.type());
      };
      std::set<std::string> initialized;
      if (w.graph) {
        for (const auto& vi : w.graph->input()) {
          body.inputs.insert(vi.name());
          declare(vi);
        }
        for (const auto& vi : w.graph->output()) declare(vi);
        for (const auto& vi : w.graph->value_info()) declare(vi);
        for (const auto& t : w.graph->initializer()) initialized.insert(t.name());
      } else {
        for (const auto& in : w.function->input()) body.inputs.insert(in);
        for (const auto& vi : w.function->value_info()) declare(vi);
      }
      for (const auto& n : nodes)
        for (const auto& o : n.output())
          if (!o.empty()) body.producer.emplace(o, &n);
      auto type_of = [](const BodyTypes* b, const std::string& v) -> const onnx::TypeProto* {
        if (!b) return nullptr;
        auto it = b->types.find(v);
        return it == b->types.end() ? nullptr : it->second;
      };

      // The cause of a dynamic value: back through the producers, each time to the first
      // dynamic input, up to a node whose inputs are all static or an input of the body.
      std::unordered_map<std::string, std::pair<std::string, std::string>> causes;  // value -> (cause, why)
      auto cause_of = [&](const std::string& v) {
        std::vector<std::string> chain{v};
        std::pair<std::string, std::string> found;
        while (true) {
          const std::string at = chain.back();
          if (auto c = causes.find(at); c != causes.end()) {
            found = c->second;
            break;
          }
          const BodyTypes* owner = body.owner(at);
          if (owner != &body) {
            found = {"outer value " + quoted(at), "it is dynamic where it is defined"};
            break;
          }
          if (body.inputs.count(at)) {
            if (auto open = w.outer || !w.graph ? std::nullopt : open_dim(type_of(&body, at), open_inputs))
              found = {"input dim " + quoted(*open), "not bound"};
            else
              found = {"input " + quoted(at), w.graph ? input_why(type_of(&body, at)) : "a function's input"};
            break;
          }
          auto p = body.producer.find(at);
          if (p == body.producer.end()) {
            found = {"value " + quoted(at), "nothing in its body defines it"};
            break;
          }
          const onnx::NodeProto& n = *p->second;
          std::string next;
          for (const auto& in : n.input()) {
            if (in.empty() || initialized.count(in) || std::find(chain.begin(), chain.end(), in) != chain.end()) continue;
            if (const BodyTypes* o = body.owner(in); o && !static_type(type_of(o, in))) {
              next = in;
              break;
            }
          }
          if (next.empty()) {
            found = {node_text(n), node_why(n)};
            break;
          }
          chain.push_back(std::move(next));
        }
        for (const auto& c : chain) causes.emplace(c, found);
        return found;
      };

      std::unordered_map<std::string, std::string> makers;  // fresh symbol -> the first value with it
      auto count = [&](const std::string& name) {
        ++out.values;
        const onnx::TypeProto* t = type_of(&body, name);
        if (static_type(t)) return;
        auto [cause, why] = cause_of(name);
        if (auto open = open_dim(t, open_inputs)) {
          cause = "input dim " + quoted(*open);
          why = "not bound";
        } else if (auto fresh = fresh_dim(t)) {
          // The first node of the body whose output has the fresh symbol made it.
          // The node that made it, or what made that node's inputs dynamic.
          if (makers.empty())
            for (const auto& n : nodes)
              for (const auto& o : n.output())
                if (auto f = o.empty() ? std::nullopt : fresh_dim(type_of(&body, o))) makers.emplace(*f, o);
          if (auto m = makers.find(*fresh); m != makers.end()) std::tie(cause, why) = cause_of(m->second);
        }
        out.dynamic.push_back({name, body.where, type_text(t), std::move(cause), std::move(why)});
      };
      if (w.graph)
        for (const auto& vi : w.graph->input())
          if (!initialized.count(vi.name())) count(vi.name());
      for (const auto& n : nodes) {
        for (const auto& o : n.output())
          if (!o.empty()) count(o);
        for_each_subgraph(n, [&](const GraphProto& sub) {
          work.push_back({&sub, nullptr, &body, "node " + quoted(n.name().empty() ? n.output(0) : n.name())});
        });
      }
    }
  };
  walk({&model.graph(), nullptr, nullptr, "graph " + quoted(model.graph().name())});
  for (const auto& f : model.functions()) walk({nullptr, &f, nullptr, "function " + quoted(FunctionId::of(f).str())});
  return out;
}

std::string static_shapes_line(const StaticShapes& shapes) {
  const auto plural = [](size_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  if (shapes.dynamic.empty()) return "every value static (" + plural(shapes.values, "value") + ")";
  // Grouped by cause, the largest first (ties in order of first appearance).
  std::vector<std::pair<std::string, size_t>> groups;
  std::map<std::string, std::string> why;
  for (const auto& d : shapes.dynamic) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == d.cause; });
    if (it == groups.end()) {
      groups.emplace_back(d.cause, 1);
      why[d.cause] = d.why;
    } else {
      ++it->second;
    }
  }
  std::string line = std::to_string(shapes.dynamic.size()) + " of " + plural(shapes.values, "value") + " stay" +
                     (shapes.dynamic.size() == 1 ? "s" : "") + " dynamic: ";
  std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  constexpr size_t kShown = 4;
  for (size_t i = 0; i < groups.size() && i < kShown; ++i)
    line += (i ? ", " : "") + std::to_string(groups[i].second) + " from " + groups[i].first + " (" +
            why[groups[i].first] + ")";
  if (groups.size() > kShown) line += ", and " + plural(groups.size() - kShown, "other cause");
  return line;
}

}  // namespace shapeprop
