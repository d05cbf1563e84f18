// The table of options (shapeprop/options.def), the help printed from it, and the rules of
// which options go together.
#include "shapeprop/options.h"

#include <algorithm>

#include "shapeprop/dim.h"
#include "shapeprop/transform_options.h"

namespace shapeprop {

namespace {

constexpr OptionSpec kOptions[] = {
#define SHAPEPROP_OPTION(ID, ...) OptionSpec{.id = OptionId::ID, __VA_ARGS__},
#define SHAPEPROP_LIMIT(ID, FLAG, METAVAR, FIELD, MIN, MAX, BYTES, HELP)                                        \
  OptionSpec{.id = OptionId::ID,                                                                                \
             .flag = FLAG,                                                                                      \
             .metavar = METAVAR,                                                                                \
             .section = OptionSection::Limits,                                                                  \
             .help = HELP,                                                                                      \
             .limit = {MIN, MAX, BYTES, [](const Limits& l) -> uint64_t { return l.FIELD; },                    \
                       [](Limits& l, uint64_t v) { l.FIELD = static_cast<decltype(Limits::FIELD)>(v); }}},
#include "shapeprop/options.def"
#undef SHAPEPROP_OPTION
#undef SHAPEPROP_LIMIT
};

static_assert(std::size(kOptions) == kOptionCount);
constexpr bool in_id_order() {
  for (size_t i = 0; i < std::size(kOptions); ++i)
    if (static_cast<size_t>(kOptions[i].id) != i) return false;
  return true;
}
static_assert(in_id_order());

const char* const kIntro = R"(usage: onnx-infer-shapes [options] INPUT

Infers types and shapes through the model's functions, per call site, and writes them
as graph value_info and FunctionProto.value_info.
)";

const char* const kSections[] = {
    "options:",
    "deployment shapes (the graph's inputs as a backend will feed them; before the analysis):",
    "limits (beyond them: a one-line error; for inlining, the call stays):",
};

const char* const kExitStatus = "exit status: 0 ok, 1 a check found problems, 2 bad usage or unreadable input\n";

// The help's lines, "{default}" filled in.
std::string help_of(const OptionSpec& o) {
  std::string help(o.help);
  if (auto at = help.find("{default}"); at != std::string::npos && o.default_text)
    help.replace(at, 9, o.default_text());
  return help;
}

// One option in --help: its flags and value, then its help from column `column`, on the
// same line when they leave room for it.
void write_option(std::string& out, const OptionSpec& o) {
  const size_t column = o.section == OptionSection::Limits ? 30 : 25;
  std::string head = "  ";
  if (!o.short_flag.empty()) head += std::string(o.short_flag) + ", ";
  head += o.flag;
  if (!o.metavar.empty()) head += " " + std::string(o.metavar);
  std::string help = help_of(o);
  if (o.section == OptionSection::Limits)
    help += " (default " + limit_text(o.limit.get(Limits{}), o.limit.bytes) + ")";
  out += head;
  if (head.size() + 2 <= column)
    out += std::string(column - head.size(), ' ');
  else
    out += "\n" + std::string(column, ' ');
  for (char c : help) {
    out += c;
    if (c == '\n') out += std::string(column, ' ');
  }
  out += '\n';
}

std::string name_in(const OptionSpec& o, Conflict::Spelling spelling) {
  if (spelling == Conflict::Spelling::Keys) return std::string(o.key) + (o.negates ? " = false" : "");
  if (!o.error_name.empty()) return std::string(o.error_name);
  return std::string(o.short_flag.empty() ? o.flag : o.short_flag);
}

bool given(const OptionUse& use, OptionId id) { return use.given.test(static_cast<size_t>(id)); }

}  // namespace

std::span<const OptionSpec> all_options() { return kOptions; }
const OptionSpec& option_spec(OptionId id) { return kOptions[static_cast<size_t>(id)]; }

std::string limit_text(uint64_t value, bool bytes) {
  if (bytes)
    for (const auto& [unit, scale] : {std::pair{'G', uint64_t{1} << 30}, {'M', uint64_t{1} << 20}, {'K', uint64_t{1} << 10}}) {
      if (value % scale == 0) return std::to_string(value / scale) + unit;
      if ((value + 1) % scale == 0) return std::to_string((value + 1) / scale) + unit + "-1";
    }
  return std::to_string(value);
}

std::string help_text() {
  std::string out = kIntro;
  for (size_t section = 0; section < std::size(kSections); ++section) {
    out += "\n";
    out += kSections[section];
    out += "\n";
    for (const auto& o : kOptions)
      if (static_cast<size_t>(o.section) == section) write_option(out, o);
  }
  out += "\n";
  out += kExitStatus;
  return out;
}

bool implies_transform(const OptionSet& given) {
  return std::any_of(std::begin(kOptions), std::end(kOptions),
                     [&](const OptionSpec& o) { return o.implies_transform && given.test(static_cast<size_t>(o.id)); });
}

std::optional<Conflict> find_conflict(const OptionUse& use) {
  if (use.mode == Mode::Check)
    for (const auto& o : kOptions)
      if (given(use, o.id) && !(o.modes & mode_bit(Mode::Check))) return Conflict{.rule = Conflict::Rule::NotInCheck, .option = o.id};
  if (!(mode_bit(use.mode) & kTransformModes))
    for (const auto& o : kOptions)
      if (given(use, o.id) && !(o.modes & mode_bit(use.mode)))
        return Conflict{.rule = Conflict::Rule::TransformOnly, .option = o.id};
  if (mode_bit(use.mode) & kTransformModes)
    for (const auto& o : kOptions)
      if (given(use, o.id) && !(o.modes & mode_bit(use.mode)))
        return Conflict{.rule = Conflict::Rule::AnnotateOnly, .option = o.id};
  if (given(use, OptionId::PrintShapes) && given(use, OptionId::NoInfer))
    return Conflict{.rule = Conflict::Rule::ShapesNeedInference, .option = OptionId::PrintShapes};
  if (given(use, OptionId::PrintShapes) && use.shapes_on_stdout &&
      (use.stdout_named || (given(use, OptionId::Emit) && !given(use, OptionId::Output))))
    return Conflict{.rule = Conflict::Rule::ShapesOnStdout, .option = OptionId::PrintShapes, .stdout_named = use.stdout_named};
  if (!use.passes.empty())
    for (Pass pass : use.print_after)
      if (std::find(use.passes.begin(), use.passes.end(), pass) == use.passes.end())
        return Conflict{.rule = Conflict::Rule::PassNotRun, .option = OptionId::PrintAfter, .pass = pass};
  return std::nullopt;
}

std::string Conflict::message(Spelling spelling) const {
  const bool flags = spelling == Spelling::Flags;
  const std::string name = name_in(option_spec(option), spelling);
  switch (rule) {
    case Rule::NotInCheck:
      return (flags ? "--mode check writes nothing and takes no " : "a check writes nothing, and takes no ") + name;
    case Rule::TransformOnly:
      return name + (flags ? " applies to --mode specialize or inline" : " applies to a transform only");
    case Rule::AnnotateOnly:
      return name + (flags ? " applies to --mode annotate only" : " applies to infer_shapes only") +
             ": a rewrite never rests on a fact taken on trust";
    case Rule::ShapesNeedInference:
      return name + " lists what inference proves, and " + name_in(option_spec(OptionId::NoInfer), spelling) +
             " runs none";
    case Rule::ShapesOnStdout:
      return name + " writes the types on stdout: write the model with -o PATH, not " +
             (stdout_named ? "-o -" : "--emit alone");
    case Rule::PassNotRun: {
      const std::string pass_name(pass_info(pass).name);
      return flags ? name + " " + pass_name + " names a pass --passes does not run"
                   : name + " names " + pass_name + ", which passes does not run";
    }
  }
  return name;
}

}  // namespace shapeprop
