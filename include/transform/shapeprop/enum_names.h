// The names of the options' enums, as the command line, the Python package and the report
// spell them: one table per enum, read both ways. (Pass names are passes.def's.)
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "shapeprop/io.h"
#include "shapeprop/transform_options.h"

namespace shapeprop {

// What a run does (--mode; the Python package's job; the report's "mode").
enum class Mode {
  Annotate,    // write inferred types only
  Specialize,  // specialize, fold, rewrite; functions stay
  Inline,      // specialize, then inline
  Check,       // write nothing; check the declared types
};

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

inline constexpr EnumName<Mode> kModeNames[] = {
    {Mode::Annotate, "annotate"}, {Mode::Specialize, "specialize"}, {Mode::Inline, "inline"}, {Mode::Check, "check"}};
inline constexpr EnumName<InlinePolicy> kInlinePolicyNames[] = {
    {InlinePolicy::None, "none"}, {InlinePolicy::All, "all"}, {InlinePolicy::Small, "small"}};
inline constexpr EnumName<Naming> kNamingNames[] = {{Naming::Copies, "copies"}, {Naming::Overloads, "overload"}};
inline constexpr EnumName<Format> kFormatNames[] = {{Format::Text, "text"}, {Format::Binary, "binary"}};
inline constexpr EnumName<DeclaredTypes> kDeclaredTypesNames[] = {
    {DeclaredTypes::Check, "check"}, {DeclaredTypes::Use, "use"}, {DeclaredTypes::Ignore, "ignore"}};
inline constexpr EnumName<OverridableInitializers> kOverridableInitializersNames[] = {
    {OverridableInitializers::Type, "type"}, {OverridableInitializers::Value, "value"}};

inline constexpr std::span<const EnumName<Mode>> enum_names(Mode) { return kModeNames; }
inline constexpr std::span<const EnumName<InlinePolicy>> enum_names(InlinePolicy) { return kInlinePolicyNames; }
inline constexpr std::span<const EnumName<Naming>> enum_names(Naming) { return kNamingNames; }
inline constexpr std::span<const EnumName<Format>> enum_names(Format) { return kFormatNames; }
inline constexpr std::span<const EnumName<DeclaredTypes>> enum_names(DeclaredTypes) { return kDeclaredTypesNames; }
inline constexpr std::span<const EnumName<OverridableInitializers>> enum_names(OverridableInitializers) {
  return kOverridableInitializersNames;
}

// The name of `value` ("" for a value the table lacks, which a test rules out).
template <class E>
constexpr std::string_view name_of(E value) {
  for (const auto& n : enum_names(E{}))
    if (n.value == value) return n.name;
  return {};
}

// The value named `name`, if one is.
template <class E>
constexpr std::optional<E> enum_named(std::string_view name) {
  for (const auto& n : enum_names(E{}))
    if (n.name == name) return n.value;
  return std::nullopt;
}

// The names for a message: "'a', 'b' or 'c'" (quoted) or "a, b or c".
template <class E>
std::string name_choices(bool quoted) {
  const auto names = enum_names(E{});
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += quoted ? "'" + std::string(names[i].name) + "'" : std::string(names[i].name);
  }
  return out;
}

}  // namespace shapeprop
