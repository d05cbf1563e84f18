// FunctionId: how a node names a model-local function, (domain, name, overload).
//
// ONNX spells its default domain both "" and "ai.onnx"; a FunctionId always holds the
// canonical spelling "", so that ids compare and hash equal however the model wrote them.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "onnx/onnx_pb.h"
#include "shapeprop/hash_combine.h"

namespace shapeprop {

struct FunctionId {
  std::string domain;    // canonical: never "ai.onnx"
  std::string name;      // FunctionProto.name, or the calling node's op_type
  std::string overload;  // empty when the function is not overloaded

  FunctionId() = default;
  FunctionId(std::string domain_, std::string name_, std::string overload_ = {})
      : domain(canonical_domain(std::move(domain_))), name(std::move(name_)), overload(std::move(overload_)) {}

  // The function a node calls (if the model defines it), and the id a function defines.
  static FunctionId of(const onnx::NodeProto& node) { return {node.domain(), node.op_type(), node.overload()}; }
  static FunctionId of(const onnx::FunctionProto& function) {
    return {function.domain(), function.name(), function.overload()};
  }

  // "" and "ai.onnx" name the same domain; "" is the canonical spelling.
  static std::string canonical_domain(std::string domain) { return domain == "ai.onnx" ? std::string() : domain; }
  static bool is_default_domain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }
  // canonical_domain as a view of `domain` (or of ""), where no string need be made.
  static std::string_view canonical_domain_view(std::string_view domain) {
    return is_default_domain(domain) ? std::string_view() : domain;
  }

  // "domain.name", "domain.name:overload", or "name" in the default domain: how
  // diagnostics, dumps and call paths name a function.
  std::string str() const {
    std::string s = domain.empty() ? name : domain + "." + name;
    if (!overload.empty()) s += ":" + overload;
    return s;
  }

  // Lexicographic on (domain, name, overload): the order every deterministic listing uses.
  friend auto operator<=>(const FunctionId&, const FunctionId&) = default;
  friend bool operator==(const FunctionId&, const FunctionId&) = default;

  // The id a node calls as views of the node's own strings (the domain canonical), for
  // looking it up, without copying them, in a map keyed by FunctionId with Hash and Equal
  // (both transparent).
  struct View {
    std::string_view domain, name, overload;
    static View of(const onnx::NodeProto& node) {
      return {is_default_domain(node.domain()) ? std::string_view() : std::string_view(node.domain()), node.op_type(),
              node.overload()};
    }
    friend bool operator==(const View&, const View&) = default;
  };
  static View view(const FunctionId& id) { return {id.domain, id.name, id.overload}; }
  static const View& view(const View& id) { return id; }

  struct Hash {
    using is_transparent = void;
    std::size_t operator()(const View& id) const {
      std::hash<std::string_view> h;
      std::size_t seed = h(id.domain);
      for (std::string_view part : {id.name, id.overload}) hash_combine(seed, h(part));
      return seed;
    }
    std::size_t operator()(const FunctionId& id) const { return (*this)(view(id)); }
  };
  struct Equal {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a) == view(b);
    }
  };
};

}  // namespace shapeprop
