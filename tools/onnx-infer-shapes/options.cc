#include "options.h"

#include <charconv>
#include <cstdint>
#include <iostream>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include "shape_options.h"
#include "shapeprop/dim.h"
#include "shapeprop/function_id.h"
#include "shapeprop/schemas.h"
#include "shapeprop/version.h"

namespace cli {

namespace {

const char* const kUsage = R"(usage: onnx-infer-shapes [options] INPUT

Infers types and shapes through the model's functions, per call site, and writes them
as graph value_info and FunctionProto.value_info.

options:
  --mode MODE            annotate (default): write inferred types only;
                         specialize: one folded copy of each function per distinct
                         context (rank conditionals, CastLikes and shape arithmetic the
                         facts decide are gone), dead code removed;
                         inline: specialize, then inline (--inline=all unless given);
                         check: write nothing; check every declared type against
                         what strict inference proves in each context (exit 1 when
                         one is false, or the model is malformed; always strict)
  --inline POLICY        all | none | small[:N] (bodies of at most N nodes after
                         folding, default 8); implies --mode specialize at least
  --keep DOMAIN::NAME[,...]
                         functions a backend claims (a plugin of that name): their
                         calls stay as written, attributes included, through every
                         inlining policy, and their bodies are not specialized
                         (repeatable; specialize and inline modes)
  --passes NAME[,...]    run exactly these passes (--list-passes), in this order, once
                         each, instead of the pipeline of the mode (specialize, fold,
                         dce and the rewrites, then inline, until nothing changes);
                         implies --mode specialize at least
  --print-after NAME     print the model as text on stderr after each run of the pass
                         NAME: each body as that pass left it (repeatable)
  --print-shapes         print every value's proven type on stdout, one a line, in
                         graph order: the main graph, then each function per context
                         (its signature), each subgraph after its body; the model is
                         then written only with -o PATH (with --report, also the
                         report's value_shapes table)
  --list-passes          print each pass's name and description, one a line, and exit
  --expand-ops OP[,...]  replace each call of these ai.onnx ops (Attention,
                         RMSNormalization, LayerNormalization, ...) by the function
                         body the linked ONNX defines for it, built for the call's
                         types and attributes, specialized, folded and inlined at each
                         call site whatever --inline says; all-functions: every op
                         that has one; an op without one is an error (repeatable;
                         implies --mode specialize at least)
  --target-opset N       convert the result to ai.onnx opset N: ops that do not exist
                         at N are expanded (as --expand-ops), the others converted by
                         ONNX's version converter (the main graph only: functions must
                         be inlined); what cannot be is an error naming the op and why
                         (implies --mode specialize at least)
  --naming copies|overload
                         specializations of one function as renamed copies (f__0,
                         f__1; the default) or as IR-10 overloads of f, for tools
                         that look functions up by name (specialize and inline modes)
  -o, --output PATH      write the result to PATH (a regular file atomically; a
                         character device or FIFO in place); '-' or none: stdout
  --emit text|binary     output format; default from the output's extension
                         (.onnx binary, .onnxtxt text), text when writing to stdout
  --override LIB         replace the model's functions by the functions of LIB (ONNX
                         text syntax, functions only; or a binary model's functions)
                         with the same (domain, name, overload), before the analysis;
                         a replacement must keep the arity, the attributes and their
                         defaults, opsets ONNX's checker accepts, and the output types
                         of every context the model calls it in (repeatable)
  --schemas DIR          also read the rules (*.rule) under DIR for ops outside ONNX's
                         registry (repeatable; a rule there replaces the shipped rule
                         for the same op; the language: schemas/README.md)
  --strict               conflicts, ops without a schema or rule and failed inference
                         are errors
  --allow-empty-dims     do not assume symbolic dims are at least 1 (by default
                         Size(x) == 0 is false for x of shape [N, 8], as PyTorch's
                         exporter assumes of dynamic dims)
  --keep-ir-version      write nothing inside functions, so that the IR version stays
                         (FunctionProto.value_info needs IR 10; otherwise it is raised)
  --no-infer             only load, validate and write
  --debug-analysis       print the call graph and the contexts analysed per function
                         (on stderr)
  --verify-roundtrip     check that the output prints as text and parses back unchanged
  --verify-idempotent    check that running again on the output changes nothing
  --verify-full-check    check the output with ONNX's full checker (strict inference)
  --report FILE.json     write a report of the run for programs to read: counts before
                         and after, contexts and specializations per function, rewrites
                         by kind, diagnostics with call paths, time per phase, the
                         assumptions relied on (schema: docs/report.schema.json); written
                         also when the run fails (the model never is)
  -q, --quiet            print nothing but errors (on a terminal, a table of counts
                         before and after follows the summary, and runs over a second
                         show their progress)
  --version              print the version and exit
  -h, --help             print this help and exit

deployment shapes (the graph's inputs as a backend will feed them; before the analysis):
  --set-dim NAME=VALUE[,...]
                         every dim NAME of the graph's inputs and outputs is VALUE, as
                         if the model had been exported with it (repeatable); with every
                         dim bound, specialize and inline leave a static graph, and the
                         summary says which values stay dynamic and why
  --input-shape INPUT=D0,D1,...
                         the dims of input INPUT, each a whole number or ? (the dim as
                         declared); a number for a named dim binds the name (repeatable);
                         a shape the declaration contradicts is an error
  --dim-range NAME=MIN..MAX[,...]
                         input dim NAME stays symbolic, from MIN to MAX: what holds over
                         the whole range is decided, the range is recorded in
                         metadata_props as an assumption (the model is only valid
                         there), and check reports what holds for part of it only
  --rename-dim OLD=NEW[,...]
                         dim OLD of the graph's inputs and outputs is called NEW (an
                         identifier no dim of the model has)
  --name-dims            name the dims the exporter left anonymous: an input dim with
                         neither value nor name becomes INPUT_AXIS; an output dim
                         written as an expression or unnamed takes the name the output
                         declares there (a plain name used nowhere else) or OUTPUT_AXIS

limits (beyond them: a one-line error; for inlining, the call stays):
  --max-input-size BYTES      input read, K/M/G suffixes allowed (default 2G-1)
  --max-fifo-wait SECONDS     wait for the other end of a FIFO (default 10)
  --max-subgraph-depth N      subgraphs nested along any path, through calls (default 64)
  --max-call-depth N          calls nested along any path (default 64)
  --max-elements N            elements inference may materialise for one value (default 65536)
  --max-inlined-nodes N       nodes after inlining, at least (default 1000000)
  --max-inline-growth N       nodes after inlining, times those before (default 16)
  --max-specializations N     specialized copies of one function (default 256)
  --max-dim-terms N           terms of one symbolic dim expression (default 8)

exit status: 0 ok, 1 a check found problems, 2 bad usage or unreadable input
)";

// A whole number from text: decimal digits, with an optional K, M or G (powers of 1024)
// when `bytes`. nullopt when it is not one or lies outside [min, max].
std::optional<uint64_t> parse_number(std::string_view text, uint64_t min, uint64_t max, bool bytes) {
  uint64_t scale = 1;
  if (bytes && !text.empty()) {
    const char unit = text.back();
    if (unit == 'K' || unit == 'k') scale = uint64_t{1} << 10;
    if (unit == 'M' || unit == 'm') scale = uint64_t{1} << 20;
    if (unit == 'G' || unit == 'g') scale = uint64_t{1} << 30;
    if (scale > 1) text.remove_suffix(1);
  }
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (__builtin_mul_overflow(value, scale, &value) || value < min || value > max) return std::nullopt;
  return value;
}

// One --max-* flag: its range and the Limits field it sets.
struct LimitFlag {
  const char* name;
  uint64_t min, max;
  bool bytes;
  void (*set)(shapeprop::Limits&, uint64_t);
};

constexpr uint64_t kDepth = shapeprop::Limits::kMaxDepthSetting;

const std::vector<LimitFlag>& limit_flags() {
  using L = shapeprop::Limits;
  static const std::vector<LimitFlag> flags = {
      {"--max-input-size", 1, uint64_t{1} << 62, true, [](L& l, uint64_t v) { l.max_input_bytes = v; }},
      {"--max-fifo-wait", 0, 86400, false,
       [](L& l, uint64_t v) { l.fifo_wait_seconds = static_cast<uint32_t>(v); }},
      {"--max-subgraph-depth", 0, kDepth, false, [](L& l, uint64_t v) { l.max_subgraph_depth = v; }},
      {"--max-call-depth", 0, kDepth, false, [](L& l, uint64_t v) { l.max_call_depth = v; }},
      {"--max-elements", 0, uint64_t{1} << 32, false, [](L& l, uint64_t v) { l.max_elements = v; }},
      {"--max-inlined-nodes", 1, uint64_t{1} << 40, false, [](L& l, uint64_t v) { l.max_inlined_nodes = v; }},
      {"--max-inline-growth", 1, 1024, false, [](L& l, uint64_t v) { l.inline_growth = v; }},
      {"--max-specializations", 1, uint64_t{1} << 32, false, [](L& l, uint64_t v) { l.max_specializations = v; }},
      {"--max-dim-terms", 1, shapeprop::Dim::kMaxTermsCeiling, false, [](L& l, uint64_t v) { l.max_dim_terms = v; }},
  };
  return flags;
}

std::string in_quotes(const std::string& s) { return "'" + s + "'"; }

}  // namespace

void error(const std::string& message) {
  // As a Diagnostic, so that names from the command line are clipped like any other.
  std::cerr << "onnx-infer-shapes: " << shapeprop::Diagnostic::error(message).str() << '\n';
}

std::optional<int> parse_args(int argc, char** argv, Options& o) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](const char* flag) -> std::optional<std::string> {
      if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) return a.substr(eq + 1);
      if (i + 1 >= args.size()) {
        error(std::string("option ") + flag + " needs a value");
        return std::nullopt;
      }
      return args[++i];
    };
    auto is = [&](const char* name) { return a == name || a.rfind(std::string(name) + "=", 0) == 0; };
    const LimitFlag* limit = nullptr;
    for (const auto& f : limit_flags())
      if (is(f.name)) limit = &f;
    if (a == "-h" || a == "--help") {
      std::cout << kUsage;
      return kOk;
    } else if (a == "--version") {
      std::cout << "onnx-infer-shapes (shapeprop) " << shapeprop::version() << ", ONNX " << shapeprop::onnx_version()
                << " (IR " << shapeprop::onnx_ir_version() << ", ai.onnx opsets up to " << shapeprop::onnx_max_opset("")
                << ")\n";
      std::cout << "linked ONNX: " << shapeprop::onnx_build() << '\n';
      const auto schemas = shapeprop::builtin_schemas_dir();
      std::cout << "shipped rules: " << (schemas ? schemas->string() : std::string("not found")) << '\n';
      return kOk;
    } else if (limit) {
      auto v = value(limit->name);
      if (!v) return kBadInput;
      auto n = parse_number(*v, limit->min, limit->max, limit->bytes);
      if (!n) {
        error(std::string(limit->name) + " takes a whole number from " + std::to_string(limit->min) + " to " +
              std::to_string(limit->max) + (limit->bytes ? " (K, M, G allowed)" : "") + ", not " + in_quotes(*v));
        return kBadInput;
      }
      limit->set(o.infer_options.limits, *n);
    } else if (a == "-o" || is("--output")) {
      auto v = value("--output");
      if (!v) return kBadInput;
      if (v->empty()) {
        error("--output needs a file name; to write to stdout, give '-' or leave --output out");
        return kBadInput;
      }
      // "-" is standard output, as for most tools (a file of that name: -o ./-).
      o.output_dash = *v == "-";
      if (o.output_dash)
        o.output.reset();
      else
        o.output = *v;
    } else if (is("--emit")) {
      auto v = value("--emit");
      if (!v) return kBadInput;
      if (*v == "text")
        o.emit = shapeprop::Format::Text;
      else if (*v == "binary")
        o.emit = shapeprop::Format::Binary;
      else {
        error("--emit takes 'text' or 'binary', not " + in_quotes(*v));
        return kBadInput;
      }
    } else if (is("--mode")) {
      auto v = value("--mode");
      if (!v) return kBadInput;
      if (*v == "annotate")
        o.mode = Mode::Annotate;
      else if (*v == "specialize")
        o.mode = Mode::Specialize;
      else if (*v == "inline")
        o.mode = Mode::Inline;
      else if (*v == "check")
        o.mode = Mode::Check;
      else {
        error("--mode takes 'annotate', 'specialize', 'inline' or 'check', not " + in_quotes(*v));
        return kBadInput;
      }
    } else if (is("--inline")) {
      auto v = value("--inline");
      if (!v) return kBadInput;
      if (*v == "all") {
        o.inline_policy = shapeprop::InlinePolicy::All;
      } else if (*v == "none") {
        o.inline_policy = shapeprop::InlinePolicy::None;
      } else if (v->rfind("small", 0) == 0) {
        o.inline_policy = shapeprop::InlinePolicy::Small;
        if (v->size() > 5) {
          constexpr uint64_t kMaxSmall = uint64_t{1} << 32;
          auto n = (*v)[5] == ':' ? parse_number(std::string_view(*v).substr(6), 0, kMaxSmall, false) : std::nullopt;
          if (!n) {
            error("--inline small takes a node count from 0 to " + std::to_string(kMaxSmall) + ", as in small:8, not " +
                  in_quotes(*v));
            return kBadInput;
          }
          o.small_limit = static_cast<size_t>(*n);
        }
      } else {
        error("--inline takes all, none or small[:N], not " + in_quotes(*v));
        return kBadInput;
      }
    } else if (a == "--list-passes") {
      for (const auto& p : shapeprop::all_passes()) {
        std::cout << p.name << std::string(p.name.size() < 20 ? 20 - p.name.size() : 1, ' ')
                  << (p.kind == shapeprop::PassKind::Module  ? "[module] "
                      : p.kind == shapeprop::PassKind::OptIn ? "[opt-in] "
                                                             : "");
        for (char c : p.description)  // Markdown's code spans as plain text
          if (c != '`') std::cout << c;
        std::cout << '\n';
      }
      return kOk;
    } else if (is("--passes") || is("--print-after")) {
      const bool list = is("--passes");
      auto v = value(list ? "--passes" : "--print-after");
      if (!v) return kBadInput;
      std::stringstream names(*v);
      std::vector<shapeprop::Pass> passes;
      for (std::string name; std::getline(names, name, ',');) {
        auto pass = shapeprop::find_pass(name);
        if (!pass) {
          error(std::string(list ? "--passes" : "--print-after") + " names no pass " + in_quotes(name) +
                " (--list-passes lists them)");
          return kBadInput;
        }
        passes.push_back(*pass);
      }
      if (passes.empty() || (!list && passes.size() > 1)) {
        error(list ? std::string("--passes takes pass names, as in --passes fold,dce")
                   : "--print-after takes one pass name, not " + in_quotes(*v));
        return kBadInput;
      }
      if (list)
        o.passes = std::move(passes);
      else if (std::find(o.print_after.begin(), o.print_after.end(), passes.front()) == o.print_after.end())
        o.print_after.push_back(passes.front());
    } else if (is("--keep")) {
      auto v = value("--keep");
      if (!v) return kBadInput;
      std::stringstream list(*v);
      for (std::string id; std::getline(list, id, ',');) {
        const size_t sep = id.rfind("::");
        if (sep == std::string::npos || sep + 2 == id.size()) {
          error("--keep takes DOMAIN::NAME, as in pkg.onnxscript.torch_lib::aten_gelu, not " + in_quotes(id));
          return kBadInput;
        }
        o.keep.insert({shapeprop::FunctionId::canonical_domain(id.substr(0, sep)), id.substr(sep + 2)});
      }
    } else if (is("--expand-ops")) {
      auto v = value("--expand-ops");
      if (!v) return kBadInput;
      std::stringstream list(*v);
      for (std::string op; std::getline(list, op, ',');) {
        if (op == "all-functions") {
          o.expand.all_functions = true;
        } else if (op.empty() || op.find_first_of(" :./") != std::string::npos) {
          error("--expand-ops takes ai.onnx op types (Attention,RMSNormalization) or all-functions, not " +
                in_quotes(op));
          return kBadInput;
        } else {
          o.expand.ops.insert(op);
        }
      }
      if (v->empty()) {
        error("--expand-ops takes ai.onnx op types (Attention,RMSNormalization) or all-functions");
        return kBadInput;
      }
    } else if (is("--target-opset")) {
      auto v = value("--target-opset");
      if (!v) return kBadInput;
      int64_t n = 0;
      const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
      if (ec != std::errc() || end != v->data() + v->size() || n < 1 || n > shapeprop::onnx_max_opset("")) {
        error("--target-opset takes an ai.onnx opset from 1 to " + std::to_string(shapeprop::onnx_max_opset("")) +
              ", not " + in_quotes(*v));
        return kBadInput;
      }
      o.expand.target_opset = n;
    } else if (is("--naming")) {
      auto v = value("--naming");
      if (!v) return kBadInput;
      if (*v == "copies") {
        o.naming = shapeprop::Naming::Copies;
      } else if (*v == "overload") {
        o.naming = shapeprop::Naming::Overloads;
      } else {
        error("--naming takes copies or overload, not " + in_quotes(*v));
        return kBadInput;
      }
    } else if (is("--override")) {
      auto v = value("--override");
      if (!v) return kBadInput;
      o.overrides.push_back(*v);
    } else if (is("--schemas")) {
      auto v = value("--schemas");
      if (!v) return kBadInput;
      o.schema_dirs.push_back(*v);
    } else if (a == "--strict") {
      o.infer_options.strict = true;
    } else if (a == "--allow-empty-dims") {
      o.infer_options.assume_positive_dims = false;
    } else if (a == "--keep-ir-version") {
      o.infer_options.annotate_functions = false;
    } else if (a == "--no-infer") {
      o.infer = false;
    } else if (a == "--debug-analysis") {
      o.infer_options.debug = true;
    } else if (a == "--verify-roundtrip") {
      o.verify_roundtrip = true;
    } else if (a == "--verify-idempotent") {
      o.verify_idempotent = true;
    } else if (a == "--verify-full-check") {
      o.verify_full_check = true;
    } else if (is("--report")) {
      auto v = value("--report");
      if (!v) return kBadInput;
      if (v->empty()) {
        error("--report needs a file name");
        return kBadInput;
      }
      o.report = *v;
    } else if (is("--set-dim") || is("--input-shape") || is("--dim-range") || is("--rename-dim")) {
      // The deployment shapes, read into o.shapes.
      using Reader = std::optional<std::string> (*)(std::string_view, shapeprop::InputShapes&);
      const std::pair<const char*, Reader> readers[] = {{"--set-dim", read_set_dim},
                                                         {"--input-shape", read_input_shape},
                                                         {"--dim-range", read_dim_range},
                                                         {"--rename-dim", read_rename_dim}};
      for (const auto& [flag, read] : readers) {
        if (!is(flag)) continue;
        auto v = value(flag);
        if (!v) return kBadInput;
        if (auto problem = read(*v, o.shapes)) {
          error(*problem);
          return kBadInput;
        }
      }
    } else if (a == "--print-shapes") {
      o.print_shapes = true;
    } else if (a == "--name-dims") {
      o.shapes.name_dims = true;
    } else if (a == "-q" || a == "--quiet") {
      o.quiet = true;
    } else if (a.size() > 1 && a[0] == '-') {
      error("unknown option " + in_quotes(a) + " (see --help)");
      return kBadInput;
    } else if (o.input.empty()) {
      if (a.empty()) {
        error("the input path is empty");
        return kBadInput;
      }
      o.input = a;
    } else {
      error("more than one input given (" + in_quotes(o.input) + " and " + in_quotes(a) + ")");
      return kBadInput;
    }
  }
  if (o.input.empty()) {
    error("no input model given (see --help)");
    return kBadInput;
  }
  if (o.mode == Mode::Check) {
    const std::pair<bool, const char*> writing[] = {
        {o.output.has_value() || o.output_dash, "-o"},
        {o.emit.has_value(), "--emit"},
        {!o.overrides.empty(), "--override"},
        {o.inline_policy.has_value(), "--inline"},
        {!o.keep.empty(), "--keep"},
        {o.expand.any(), o.expand.target_opset ? "--target-opset" : "--expand-ops"},
        {o.naming.has_value(), "--naming"},
        {!o.passes.empty(), "--passes"},
        {!o.print_after.empty(), "--print-after"},
        {o.print_shapes, "--print-shapes"},
        {!o.infer, "--no-infer"},
        {!o.infer_options.annotate_functions, "--keep-ir-version"},
        {o.infer_options.debug, "--debug-analysis"},
        {o.verify_roundtrip || o.verify_idempotent || o.verify_full_check, "--verify-*"},
        {!o.shapes.renames.empty(), "--rename-dim"},
        {o.shapes.name_dims, "--name-dims"},
    };
    for (const auto& [given, flag] : writing)
      if (given) {
        error(std::string("--mode check writes nothing and takes no ") + flag);
        return kBadInput;
      }
  }
  if (!o.transforms() && (!o.keep.empty() || o.naming || !o.print_after.empty())) {
    error(std::string(!o.keep.empty() ? "--keep" : o.naming ? "--naming" : "--print-after") +
          " applies to --mode specialize or inline");
    return kBadInput;
  }
  if (o.print_shapes && !o.infer) {
    error("--print-shapes lists what inference proves, and --no-infer runs none");
    return kBadInput;
  }
  if (o.print_shapes && (o.output_dash || (!o.output && o.emit))) {
    error(std::string("--print-shapes writes the types on stdout: write the model with -o PATH, not ") +
          (o.output_dash ? "-o -" : "--emit alone"));
    return kBadInput;
  }
  for (shapeprop::Pass p : o.print_after)
    if (!o.passes.empty() && std::find(o.passes.begin(), o.passes.end(), p) == o.passes.end()) {
      error("--print-after " + std::string(shapeprop::pass_info(p).name) + " names a pass --passes does not run");
      return kBadInput;
    }
  return std::nullopt;
}

}  // namespace cli
