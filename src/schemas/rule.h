// A rule for one operator outside ONNX's registry, as a schemas/ file states it (see
// schemas/README.md for the language): declared attributes, type constraints, and one or
// more layouts, each a signature whose input patterns bind dim symbols and whose output
// patterns are dim expressions over them, optionally with a shape function (an ONNX
// function over the op's inputs whose outputs are the output shapes).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace shapeprop::schemas {

// Where something was written: for diagnostics and for naming a layout.
struct Position {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const { return file + ":" + std::to_string(line) + ":" + std::to_string(column); }
};

// A dim expression: integers, symbols bound by the input patterns, attribute values
// (@name, @name[i], len(@name)), + - * / %, unary minus, max and min.
struct Expr {
  enum class Kind { Int, Symbol, Attribute, Length, Add, Sub, Mul, Div, Mod, Neg, Max, Min };
  Kind kind = Kind::Int;
  int64_t value = 0;      // Int; for Attribute, the index into an ints attribute (-1: a scalar int)
  std::string name;       // Symbol, Attribute, Length
  std::vector<Expr> args;

  bool is_symbol() const { return kind == Kind::Symbol; }
};

// One dim (or element) in a pattern: '_' (anything), '*Name' or '*_' (any number of dims,
// bound as a whole), or an expression (a bare symbol binds where it is first met).
struct DimPattern {
  enum class Kind { Any, Variadic, Expr };
  Kind kind = Kind::Any;
  std::string name;  // Variadic: the sequence's name ("" for '*_')
  Expr expr;         // Expr
};

// `T[B, S, D]`, `int32[*_] {L}`, `float`: an element type (a type variable declared by
// `type` or a concrete element type), the dims when the pattern constrains the shape, and
// the elements when it reads the value.
struct TensorPattern {
  std::string type_name;                          // as written
  int32_t elem_type = 0;                          // concrete element type; 0 for a type variable
  std::optional<std::vector<DimPattern>> dims;    // nullopt: any shape (also unknown rank)
  std::optional<std::vector<DimPattern>> values;  // `{...}`: the elements, when known
};

// One position of a signature. An empty position (`(a, , c)`) must be absent.
struct Param {
  std::string name;
  bool empty = false;     // the position must be left out
  bool optional = false;  // `?`: may be left out
  TensorPattern pattern;
  Position where;
};

// `@num_heads == 0`, `len(@qkv_hidden_sizes) == 3`, `D % 3 == 0`.
struct Condition {
  enum class Op { Eq, Ne, Lt, Le, Gt, Ge };
  Expr lhs, rhs;
  Op op = Op::Eq;
};

struct Layout {
  std::string label;  // as written, or "layout N"
  Position where;
  std::vector<Condition> guards;
  std::vector<Param> inputs;
  std::vector<Param> outputs;
  // Outputs written without dims take their shapes from the shape function's output of
  // the same name, a 1-D int64 tensor the analyzer evaluates symbolically.
  std::optional<onnx::FunctionProto> shape_function;
};

struct AttributeDecl {
  std::string name;
  onnx::AttributeProto::AttributeType type = onnx::AttributeProto::UNDEFINED;
  std::optional<onnx::AttributeProto> default_value;  // named `name`
};

struct TypeConstraint {
  std::string name;
  std::vector<int32_t> allowed;  // element types, as ONNX's `tensor(float)` vocabulary names them
};

struct OpRule {
  std::string domain;  // canonical: "" for the default domain
  std::string op;
  // `op Celu since 28`: the rule states that version of an ai.onnx op, newer than the
  // linked ONNX's registry, and holds from that opset on (support/newer_onnx.h); 0 for a
  // rule of an op outside ONNX's registry.
  int since = 0;
  Position where;
  std::vector<AttributeDecl> attributes;
  std::vector<TypeConstraint> types;
  std::vector<Layout> layouts;
  // `body (A, B) => (Y) { ... }`: the op's function body (ONNX text syntax, at the rule's
  // opset), which --expand-ops lowers a call of the op to, as it does ONNX's own bodies.
  std::optional<onnx::FunctionProto> body;

  const AttributeDecl* attribute(const std::string& name) const {
    for (const auto& a : attributes)
      if (a.name == name) return &a;
    return nullptr;
  }
  const TypeConstraint* type(const std::string& name) const {
    for (const auto& t : types)
      if (t.name == name) return &t;
    return nullptr;
  }
  // "com.microsoft.Gelu", "SimplifiedLayerNormalization".
  std::string qualified_name() const { return domain.empty() ? op : domain + "." + op; }
  // "Celu-28" for a versioned rule, else qualified_name().
  std::string versioned_name() const { return since ? qualified_name() + "-" + std::to_string(since) : qualified_name(); }
};

}  // namespace shapeprop::schemas
