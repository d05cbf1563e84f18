// The rule language's parser: a hand-written recursive descent over a lazy lexer (lazy so
// that a shape function's body, which is ONNX text syntax, can be handed to ONNX's own
// parser verbatim). Errors are thrown as RuleError inside and come out as one Diagnostic.
#include "schemas/rule_parser.h"

#include <cctype>
#include <map>
#include <set>
#include <tuple>
#include <type_traits>
#include <utility>

#include "onnx/defs/parser.h"
#include "shapeprop/function_id.h"
#include "shapeprop/io.h"
#include "support/newer_onnx.h"

namespace shapeprop::schemas {

namespace {

// The opset shape functions are written against.
constexpr int kShapeFunctionOpset = 18;
constexpr const char* kShapeFunctionDomain = "shapeprop.schemas";

// An element type by ONNX's name for it, or by the name of one IR 14 added (float6e2m3),
// which the linked ONNX may not know; 0 for neither.
int32_t elem_type_named(const std::string& name) {
  if (const int32_t t = onnx::PrimitiveTypeNameMap::Lookup(name)) return t;
  return newer_onnx::newer_elem_type(name);
}

struct RuleError {
  Position where;
  std::string message;
};

struct Token {
  enum class Kind { Ident, Int, Float, String, Punct, End };
  Kind kind = Kind::End;
  std::string text;  // a string literal's contents, unquoted
  size_t offset = 0;
  int line = 1;
  int column = 1;
};

// An op's name as a rule states it, "domain.Op" or "Op": (canonical domain, op).
std::pair<std::string, std::string> split_op_name(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {std::string(), std::string(name)};
  return {FunctionId::canonical_domain(std::string(name.substr(0, dot))), std::string(name.substr(dot + 1))};
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  const Token& peek() {
    if (!peeked_) {
      token_ = scan();
      peeked_ = true;
    }
    return token_;
  }
  Token next() {
    peek();
    peeked_ = false;
    return token_;
  }
  // Moves past raw text the lexer did not read as tokens (a shape function's body).
  void resume_at(size_t offset) {
    while (pos_ < offset) advance();
    peeked_ = false;
  }
  std::string_view text() const { return text_; }
  // What starts and continues an identifier (scan_rule_ops reads op names the same way).
  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
  Position at(const Token& t) const { return {file_, t.line, t.column}; }
  [[noreturn]] void fail(const Token& t, std::string message) const { throw RuleError{at(t), std::move(message)}; }

 private:
  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1, column_ = 1;
  Token token_;
  bool peeked_ = false;

  char cur(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  void advance() {
    if (pos_ >= text_.size()) return;
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    ++pos_;
  }
  Token scan() {
    for (;;) {
      while (std::isspace(static_cast<unsigned char>(cur()))) advance();
      if (cur() != '#') break;
      while (cur() != '\0' && cur() != '\n') advance();
    }
    Token t;
    t.offset = pos_;
    t.line = line_;
    t.column = column_;
    const char c = cur();
    if (c == '\0') return t;
    if (ident_start(c)) {
      t.kind = Token::Kind::Ident;
      // Dots join the parts of a qualified op name (com.microsoft.Gelu).
      while (ident_char(cur()) || (cur() == '.' && ident_start(cur(1)))) advance();
      t.text = std::string(text_.substr(t.offset, pos_ - t.offset));
      return t;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      t.kind = Token::Kind::Int;
      while (std::isdigit(static_cast<unsigned char>(cur()))) advance();
      if (cur() == '.' && std::isdigit(static_cast<unsigned char>(cur(1)))) {
        t.kind = Token::Kind::Float;
        advance();
        while (std::isdigit(static_cast<unsigned char>(cur()))) advance();
      }
      if ((cur() == 'e' || cur() == 'E') &&
          (std::isdigit(static_cast<unsigned char>(cur(1))) ||
           ((cur(1) == '-' || cur(1) == '+') && std::isdigit(static_cast<unsigned char>(cur(2)))))) {
        t.kind = Token::Kind::Float;
        advance();
        advance();
        while (std::isdigit(static_cast<unsigned char>(cur()))) advance();
      }
      t.text = std::string(text_.substr(t.offset, pos_ - t.offset));
      return t;
    }
    if (c == '"') {
      t.kind = Token::Kind::String;
      advance();
      while (cur() != '"') {
        if (cur() == '\0' || cur() == '\n') throw RuleError{{file_, t.line, t.column}, "string is not closed"};
        t.text += cur();
        advance();
      }
      advance();
      return t;
    }
    t.kind = Token::Kind::Punct;
    static const char* const two[] = {"=>", "==", "!=", "<=", ">="};
    for (const char* p : two)
      if (c == p[0] && cur(1) == p[1]) {
        advance();
        advance();
        t.text = p;
        return t;
      }
    if (std::string_view("()[]{}<>,:;=?*/%+-@_").find(c) == std::string_view::npos)
      throw RuleError{{file_, t.line, t.column}, std::string("unexpected character '") + c + "'"};
    advance();
    t.text = std::string(1, c);
    return t;
  }
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : lex_(text, file), file_(file) {}

  std::vector<OpRule> file() {
    std::vector<OpRule> rules;
    while (lex_.peek().kind != Token::Kind::End) rules.push_back(op());
    if (rules.empty()) lex_.fail(lex_.peek(), "no rule in this file (expected 'op')");
    return rules;
  }

 private:
  Lexer lex_;
  const std::string& file_;

  // ------------------------------------------------------------------ tokens

  bool is(const char* text) {
    const Token& t = lex_.peek();
    return (t.kind == Token::Kind::Punct || t.kind == Token::Kind::Ident) && t.text == text;
  }
  bool accept(const char* text) {
    if (!is(text)) return false;
    lex_.next();
    return true;
  }
  Token expect(const char* text, const char* what = nullptr) {
    if (!is(text)) lex_.fail(lex_.peek(), std::string("expected ") + (what ? what : "'" + std::string(text) + "'") + found());
    return lex_.next();
  }
  std::string found() {
    const Token& t = lex_.peek();
    switch (t.kind) {
      case Token::Kind::End: return ", found the end of the file";
      case Token::Kind::String: return ", found \"" + t.text + "\"";
      default: return ", found '" + t.text + "'";
    }
  }
  Token ident(const char* what) {
    if (lex_.peek().kind != Token::Kind::Ident) lex_.fail(lex_.peek(), std::string("expected ") + what + found());
    return lex_.next();
  }
  // A number with its sign: an integer literal, or for a floating T a decimal one too.
  template <class T>
  T number(const char* what) {
    constexpr bool floating = std::is_floating_point_v<T>;
    const bool negative = accept("-");
    const Token& t = lex_.peek();
    if (t.kind != Token::Kind::Int && !(floating && t.kind == Token::Kind::Float))
      lex_.fail(t, std::string("expected ") + what + found());
    Token n = lex_.next();
    try {
      const T v = floating ? static_cast<T>(std::stod(n.text)) : static_cast<T>(std::stoll(n.text));
      return negative ? -v : v;
    } catch (const std::exception&) {
      lex_.fail(n, "number out of range");
    }
  }
  int64_t integer(const char* what) { return number<int64_t>(what); }

  // ------------------------------------------------------------------ op

  OpRule op() {
    Token kw = lex_.peek();
    expect("op", "'op'");
    Token name = ident("the op's name, as domain.Op");
    OpRule rule;
    rule.where = lex_.at(kw);
    std::tie(rule.domain, rule.op) = split_op_name(name.text);
    if (is("since")) {
      Token since = lex_.next();
      const int64_t v = integer("the opset the op's version holds from");
      if (!rule.domain.empty()) lex_.fail(since, "'since' versions ai.onnx ops only");
      if (v <= newer_onnx::kBaseOpset || v > newer_onnx::kMaxOpset)
        lex_.fail(since, "'since' takes an ai.onnx opset after " + std::to_string(newer_onnx::kBaseOpset) + " up to " +
                             std::to_string(newer_onnx::kMaxOpset));
      rule.since = static_cast<int>(v);
    }
    if (accept("<")) {
      do rule.attributes.push_back(attribute(rule));
      while (accept(","));
      expect(">");
    }
    while (is("type")) rule.types.push_back(type_constraint(rule));
    if (!is("layout")) lex_.fail(lex_.peek(), "expected 'layout' or 'type'" + found());
    while (is("layout")) rule.layouts.push_back(layout(rule));
    if (is("body")) {
      Token body = lex_.next();
      if (!rule.since) lex_.fail(body, "a 'body' belongs to a versioned ai.onnx op ('op Name since N')");
      rule.body = function_text(rule, "", rule.op, rule.since, "in the body");
    }
    return rule;
  }

  AttributeDecl attribute(const OpRule& rule) {
    Token name = ident("an attribute name");
    if (rule.attribute(name.text)) lex_.fail(name, "attribute '" + name.text + "' is declared twice");
    expect(":");
    Token type = ident("an attribute type (int, float, string, ints, floats, strings)");
    AttributeDecl a;
    a.name = name.text;
    const int32_t t = onnx::AttributeTypeNameMap::Lookup(type.text);
    using A = onnx::AttributeProto;
    if (t != A::INT && t != A::FLOAT && t != A::STRING && t != A::INTS && t != A::FLOATS && t != A::STRINGS)
      lex_.fail(type, "attribute type '" + type.text + "' is not one of int, float, string, ints, floats, strings");
    a.type = static_cast<A::AttributeType>(t);
    if (accept("=")) {
      A value;
      value.set_name(a.name);
      value.set_type(a.type);
      switch (a.type) {
        case A::INT: value.set_i(integer("an integer")); break;
        case A::FLOAT: value.set_f(static_cast<float>(number<double>("a number"))); break;
        case A::STRING: value.set_s(string_literal()); break;
        default: {
          expect("[");
          if (!is("]")) do {
              if (a.type == A::INTS) value.add_ints(integer("an integer"));
              else if (a.type == A::FLOATS) value.add_floats(static_cast<float>(number<double>("a number")));
              else value.add_strings(string_literal());
            } while (accept(","));
          expect("]");
        }
      }
      a.default_value = std::move(value);
    }
    return a;
  }

  std::string string_literal() {
    if (lex_.peek().kind != Token::Kind::String) lex_.fail(lex_.peek(), "expected a string" + found());
    return lex_.next().text;
  }

  // `type T: tensor(float), tensor(float16)`: ONNX's own vocabulary for type constraints.
  TypeConstraint type_constraint(const OpRule& rule) {
    expect("type");
    Token name = ident("a type variable");
    if (rule.type(name.text)) lex_.fail(name, "type variable '" + name.text + "' is declared twice");
    if (elem_type_named(name.text))
      lex_.fail(name, "'" + name.text + "' is an element type, not a name for a type variable");
    expect(":");
    TypeConstraint tc;
    tc.name = name.text;
    do {
      expect("tensor", "a type such as tensor(float)");
      expect("(");
      Token elem = ident("an element type");
      const int32_t t = elem_type_named(elem.text);
      if (t == 0) lex_.fail(elem, "'" + elem.text + "' is not an element type");
      tc.allowed.push_back(t);
      expect(")");
    } while (accept(","));
    return tc;
  }

  // ------------------------------------------------------------------ layouts

  Layout layout(const OpRule& rule) {
    Token kw = expect("layout");
    Layout l;
    l.where = lex_.at(kw);
    l.label = lex_.peek().kind == Token::Kind::String ? lex_.next().text : "layout " + std::to_string(rule.layouts.size() + 1);
    if (accept("where")) {
      do l.guards.push_back(condition());
      while (accept(","));
    }
    expect("(", "'(' and the inputs");
    if (!is(")")) {
      for (;;) {
        if (is(",") || is(")")) {  // an empty position: that input must be left out
          Param p;
          p.empty = true;
          p.where = lex_.at(lex_.peek());
          l.inputs.push_back(p);
        } else {
          l.inputs.push_back(param(rule, /*input=*/true));
        }
        if (!accept(",")) break;
      }
    }
    expect(")");
    expect("=>");
    expect("(", "'(' and the outputs");
    do l.outputs.push_back(param(rule, /*input=*/false));
    while (accept(","));
    expect(")");
    if (is("shape")) l.shape_function = shape_function(rule, l);
    check(rule, l);
    return l;
  }

  Param param(const OpRule& rule, bool input) {
    Param p;
    if (!input && is("_")) {  // `_ name`: an output the rule states nothing of
      p.where = lex_.at(lex_.next());
      p.pattern.type_name = "_";
      p.name = ident("the name of the output").text;
      return p;
    }
    Token type = ident(input ? "an input: type[dims] name" : "an output: type[dims] name");
    p.where = lex_.at(type);
    p.pattern.type_name = type.text;
    p.pattern.elem_type = elem_type_named(type.text);
    if (p.pattern.elem_type == 0 && !rule.type(type.text))
      lex_.fail(type, "'" + type.text + "' is neither an element type nor a type variable declared with 'type'");
    if (accept("[")) {
      p.pattern.dims.emplace();
      if (!is("]")) do p.pattern.dims->push_back(dim_pattern(input));
        while (accept(","));
      expect("]");
    }
    if (is("{")) {
      Token brace = lex_.next();
      if (!input) lex_.fail(brace, "an output cannot state its elements");
      p.pattern.values.emplace();
      do p.pattern.values->push_back(dim_pattern(input));
      while (accept(","));
      expect("}");
    }
    p.optional = accept("?");
    p.name = ident("the name of the input or output").text;
    return p;
  }

  DimPattern dim_pattern(bool input) {
    DimPattern d;
    if (accept("_")) return d;
    if (is("*")) {
      Token star = lex_.next();
      d.kind = DimPattern::Kind::Variadic;
      if (!accept("_")) d.name = ident("a name for the dims '*' stands for").text;
      if (!input && d.name.empty()) lex_.fail(star, "an output cannot have '*_' dims: name them in an input");
      return d;
    }
    d.kind = DimPattern::Kind::Expr;
    d.expr = expr();
    return d;
  }

  // ------------------------------------------------------------------ expressions

  Condition condition() {
    Condition c;
    c.lhs = expr();
    static const std::map<std::string, Condition::Op> ops = {{"==", Condition::Op::Eq}, {"!=", Condition::Op::Ne},
                                                            {"<", Condition::Op::Lt},  {"<=", Condition::Op::Le},
                                                            {">", Condition::Op::Gt},  {">=", Condition::Op::Ge}};
    auto it = ops.find(lex_.peek().text);
    if (lex_.peek().kind != Token::Kind::Punct || it == ops.end())
      lex_.fail(lex_.peek(), "expected a comparison (==, !=, <, <=, >, >=)" + found());
    lex_.next();
    c.op = it->second;
    c.rhs = expr();
    return c;
  }

  static Expr node(Expr::Kind kind, std::vector<Expr> args) {
    Expr e;
    e.kind = kind;
    e.args = std::move(args);
    return e;
  }

  Expr expr() {
    Expr e = term();
    for (;;) {
      if (accept("+")) e = node(Expr::Kind::Add, {e, term()});
      else if (accept("-")) e = node(Expr::Kind::Sub, {e, term()});
      else return e;
    }
  }
  Expr term() {
    Expr e = unary();
    for (;;) {
      if (accept("*")) e = node(Expr::Kind::Mul, {e, unary()});
      else if (accept("/")) e = node(Expr::Kind::Div, {e, unary()});
      else if (accept("%")) e = node(Expr::Kind::Mod, {e, unary()});
      else return e;
    }
  }
  Expr unary() {
    if (accept("-")) return node(Expr::Kind::Neg, {unary()});
    return primary();
  }
  Expr primary() {
    const Token& t = lex_.peek();
    Expr e;
    if (t.kind == Token::Kind::Int) {
      e.value = integer("an integer");
      return e;
    }
    if (accept("(")) {
      e = expr();
      expect(")");
      return e;
    }
    if (accept("@")) {
      e.kind = Expr::Kind::Attribute;
      e.name = ident("an attribute name after '@'").text;
      e.value = -1;
      if (accept("[")) {
        e.value = integer("an index");
        if (e.value < 0) lex_.fail(lex_.peek(), "an attribute index is at least 0");
        expect("]");
      }
      return e;
    }
    Token name = ident("a dim: an integer, a symbol, @attribute, or an expression");
    if (name.text == "max" || name.text == "min") {
      expect("(");
      Expr a = expr();
      expect(",");
      Expr b = expr();
      expect(")");
      return node(name.text == "max" ? Expr::Kind::Max : Expr::Kind::Min, {a, b});
    }
    if (name.text == "len") {
      expect("(");
      expect("@", "'@' and an attribute name");
      e.kind = Expr::Kind::Length;
      e.name = ident("an attribute name").text;
      expect(")");
      return e;
    }
    if (name.text.find('.') != std::string::npos) lex_.fail(name, "a symbol has no dots: '" + name.text + "'");
    e.kind = Expr::Kind::Symbol;
    e.name = name.text;
    return e;
  }

  // ------------------------------------------------------------------ shape functions

  // `shape (query, key) => (output) { ... }`: the body is ONNX text syntax, parsed by
  // ONNX's parser as a function with the op's attributes (so @attr references resolve),
  // laid out so that its line numbers are the rule file's.
  onnx::FunctionProto shape_function(const OpRule& rule, const Layout& l) {
    Token kw = expect("shape");
    onnx::FunctionProto f =
        function_text(rule, kShapeFunctionDomain, "shape_of_" + rule.op, kShapeFunctionOpset, "in the shape function");
    f.set_overload(lex_.at(kw).str() + " " + l.label);  // one memo entry per layout's function
    return f;
  }

  // After `shape` or `body`: `(inputs) => (outputs) { nodes }`, a function of the op's
  // attributes named `name` in `domain`, importing ai.onnx at `opset`.
  onnx::FunctionProto function_text(const OpRule& rule, const std::string& domain, const std::string& name,
                                    int opset, const std::string& what) {
    auto names = [&](const char* which) {
      std::vector<std::string> out;
      expect("(");
      if (!is(")")) do out.push_back(ident(which).text);
        while (accept(","));
      expect(")");
      return out;
    };
    const auto inputs = names("an input name");
    expect("=>");
    const auto outputs = names("an output name");
    const Token open = lex_.peek();
    if (!is("{")) lex_.fail(open, "expected '{' and the function's nodes" + found());
    const std::string_view text = lex_.text();
    size_t end = open.offset;
    int depth = 0;
    bool in_string = false;
    for (; end < text.size(); ++end) {
      const char c = text[end];
      if (in_string) {
        if (c == '"') in_string = false;
        continue;
      }
      if (c == '"') in_string = true;
      else if (c == '{') ++depth;
      else if (c == '}' && --depth == 0) break;
      else if (c == '#')
        while (end + 1 < text.size() && text[end + 1] != '\n') ++end;
    }
    if (end >= text.size()) lex_.fail(open, "the function's '{' is not closed");
    lex_.resume_at(end + 1);

    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
      return s;
    };
    std::vector<std::string> attributes;
    for (const auto& a : rule.attributes) attributes.push_back(a.name);
    std::string header = std::string(static_cast<size_t>(open.line - 1), '\n') + "<domain: \"" + domain +
                         "\", opset_import: [\"\" : " + std::to_string(opset) + "]> " + name;
    if (!attributes.empty()) header += " <" + join(attributes) + ">";
    header += " (" + join(inputs) + ") => (" + join(outputs) + ") ";
    auto parsed = parse_function_text(header + std::string(text.substr(open.offset, end + 1 - open.offset)), file_);
    if (!parsed) {
      const Diagnostic& d = parsed.error();
      // Lines are the file's; columns are too, but on the line of '{', where the header stands.
      const bool own_line = d.line != 0 && d.line != open.line;
      throw RuleError{{file_, own_line ? d.line : open.line, own_line ? d.column : open.column}, what + ": " + d.message};
    }
    return std::move(*parsed);
  }

  // ------------------------------------------------------------------ checks

  // Names used where nothing binds them would silently give unknowns at inference time.
  void check(const OpRule& rule, const Layout& l) {
    std::set<std::string> scalars, sequences, names;
    for (const auto& p : l.inputs) {
      if (p.empty) continue;
      if (!names.insert(p.name).second) throw RuleError{p.where, "input '" + p.name + "' is named twice"};
      auto bind = [&](const std::optional<std::vector<DimPattern>>& dims) {
        if (!dims) return;
        int variadics = 0;
        for (const auto& d : *dims) {
          if (d.kind == DimPattern::Kind::Variadic) {
            if (++variadics > 1) throw RuleError{p.where, "input '" + p.name + "' has more than one '*' in its dims"};
            if (!d.name.empty()) sequences.insert(d.name);
          } else if (d.kind == DimPattern::Kind::Expr && d.expr.is_symbol()) {
            scalars.insert(d.expr.name);
          }
        }
      };
      bind(p.pattern.dims);
      bind(p.pattern.values);
    }
    for (const auto& s : scalars)
      if (sequences.count(s)) throw RuleError{l.where, "'" + s + "' names both one dim and a '*' sequence of dims"};
    std::set<std::string> type_vars;
    for (const auto& p : l.inputs)
      if (!p.empty && p.pattern.elem_type == 0) type_vars.insert(p.pattern.type_name);

    auto check_expr = [&](const Expr& e, const Position& where, auto&& self) -> void {
      switch (e.kind) {
        case Expr::Kind::Symbol:
          if (sequences.count(e.name))
            throw RuleError{where, "'" + e.name + "' is a '*' sequence of dims; write *" + e.name + " on its own"};
          if (!scalars.count(e.name)) throw RuleError{where, "symbol '" + e.name + "' is bound by no input of this layout"};
          break;
        case Expr::Kind::Attribute:
        case Expr::Kind::Length: {
          const AttributeDecl* a = rule.attribute(e.name);
          if (!a) throw RuleError{where, "attribute '" + e.name + "' is not declared in the op's <...>"};
          using A = onnx::AttributeProto;
          const bool ok = e.kind == Expr::Kind::Length ? (a->type == A::INTS || a->type == A::FLOATS || a->type == A::STRINGS)
                          : e.value < 0             ? a->type == A::INT
                                                    : a->type == A::INTS;
          if (!ok)
            throw RuleError{where, "attribute '" + e.name + "' is not an " +
                                       (e.kind == Expr::Kind::Length ? "attribute with a length"
                                        : e.value < 0               ? "int (write @" + e.name + "[i] for an element of ints)"
                                                                    : "ints")};
          break;
        }
        default: break;
      }
      for (const auto& a : e.args) self(a, where, self);
    };
    for (const auto& g : l.guards) {
      check_expr(g.lhs, l.where, check_expr);
      check_expr(g.rhs, l.where, check_expr);
    }
    for (const auto& p : l.inputs)
      if (!p.empty && p.pattern.dims)
        for (const auto& d : *p.pattern.dims)
          if (d.kind == DimPattern::Kind::Expr && !d.expr.is_symbol()) check_expr(d.expr, p.where, check_expr);

    std::set<std::string> shaped_by_function;
    names.clear();
    for (const auto& p : l.outputs) {
      if (!names.insert(p.name).second) throw RuleError{p.where, "output '" + p.name + "' is named twice"};
      if (p.pattern.type_name == "_") continue;
      if (p.pattern.elem_type == 0 && !type_vars.count(p.pattern.type_name) && rule.type(p.pattern.type_name)->allowed.size() != 1)
        throw RuleError{p.where, "type variable '" + p.pattern.type_name +
                                     "' is bound by no input of this layout and allows more than one type"};
      if (!p.pattern.dims) {
        shaped_by_function.insert(p.name);
        continue;
      }
      for (const auto& d : *p.pattern.dims) {
        if (d.kind == DimPattern::Kind::Variadic && !sequences.count(d.name))
          throw RuleError{p.where, "'*" + d.name + "' is bound by no input of this layout"};
        if (d.kind == DimPattern::Kind::Expr) check_expr(d.expr, p.where, check_expr);
      }
    }
    if (l.shape_function) {
      const auto& f = *l.shape_function;
      std::set<std::string> inputs;
      for (const auto& p : l.inputs)
        if (!p.empty) inputs.insert(p.name);
      for (const auto& in : f.input())
        if (!inputs.count(in)) throw RuleError{l.where, "the shape function's input '" + in + "' is not an input of this layout"};
      std::set<std::string> outs(f.output().begin(), f.output().end());
      if (outs != shaped_by_function)
        throw RuleError{l.where, "the shape function's outputs must be exactly the outputs written without dims"};
    }
  }
};

}  // namespace

Result<std::vector<OpRule>> parse_rules(std::string_view text, const std::string& file) {
  try {
    return Parser(text, file).file();
  } catch (const RuleError& e) {
    return Diagnostic::error(e.message).in_file(e.where.file, e.where.line, e.where.column);
  }
}

std::optional<std::vector<std::tuple<std::string, std::string, int>>> scan_rule_ops(std::string_view text) {
  std::vector<std::tuple<std::string, std::string, int>> keys;
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    size_t i = 0;
    while (i < line.size() && blank(line[i])) ++i;
    if (line.substr(i, 2) != "op" || (i + 2 < line.size() && !blank(line[i + 2]))) continue;
    i += 2;
    while (i < line.size() && blank(line[i])) ++i;
    // The name as the lexer reads an identifier: dots join parts that start as names do.
    const size_t start = i;
    if (i >= line.size() || !Lexer::ident_start(line[i])) return std::nullopt;
    while (i < line.size() && (Lexer::ident_char(line[i]) || (line[i] == '.' && i + 1 < line.size() && Lexer::ident_start(line[i + 1]))))
      ++i;
    auto [domain, op] = split_op_name(line.substr(start, i - start));
    while (i < line.size() && blank(line[i])) ++i;
    int since = 0;
    if (line.substr(i, 5) == "since" && (i + 5 == line.size() || blank(line[i + 5]))) {
      i += 5;
      while (i < line.size() && blank(line[i])) ++i;
      const size_t digits = i;
      while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) && i - digits < 6)
        since = since * 10 + (line[i++] - '0');
      if (i == digits || (i < line.size() && !blank(line[i]) && line[i] != '<')) return std::nullopt;
    } else if (i < line.size() && line[i] != '<' && line[i] != '#') {
      return std::nullopt;
    }
    keys.emplace_back(std::move(domain), std::move(op), since);
  }
  return keys;
}

}  // namespace shapeprop::schemas
