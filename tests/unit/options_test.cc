// Unit tests of the option table (shapeprop/options.def): --help lists every option with
// the defaults the code holds, and the command line and the library (shapeprop::run)
// refuse the same options in the same modes.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "options.h"  // the CLI's (tools/onnx-infer-shapes)
#include "shapeprop/driver.h"
#include "shapeprop/options.h"
#include "test_util.h"

namespace shapeprop {
namespace {

std::vector<std::string> help_lines() {
  std::vector<std::string> lines;
  std::stringstream help(help_text());
  for (std::string line; std::getline(help, line);) lines.push_back(line);
  return lines;
}

// The line of --help that starts option `o`.
std::string help_line(const OptionSpec& o) {
  std::string head = "  ";
  if (!o.short_flag.empty()) head += std::string(o.short_flag) + ", ";
  head += o.flag;
  if (!o.metavar.empty()) head += " " + std::string(o.metavar);
  for (const auto& line : help_lines())
    if (line.rfind(head, 0) == 0 && (line.size() == head.size() || line[head.size()] == ' ')) return line;
  return {};
}

// "2G-1", "64", "1M" as a number.
uint64_t read_limit(std::string text) {
  uint64_t minus = 0;
  if (text.size() > 2 && text.compare(text.size() - 2, 2, "-1") == 0) {
    minus = 1;
    text.resize(text.size() - 2);
  }
  uint64_t scale = 1;
  if (text.back() == 'G') scale = uint64_t{1} << 30;
  if (text.back() == 'M') scale = uint64_t{1} << 20;
  if (text.back() == 'K') scale = uint64_t{1} << 10;
  if (scale > 1) text.pop_back();
  return std::stoull(text) * scale - minus;
}

TEST(Options, HelpListsEveryOptionOnce) {
  for (const OptionSpec& o : all_options()) {
    EXPECT_FALSE(help_line(o).empty()) << o.flag << " is not in --help";
    EXPECT_FALSE(o.help.empty()) << o.flag;
    size_t count = 0;
    for (const auto& line : help_lines())
      if (line.find(std::string(o.flag) + (o.metavar.empty() ? "" : " " + std::string(o.metavar))) == 2 ||
          line.find(", " + std::string(o.flag)) == 4)
        ++count;
    EXPECT_EQ(count, 1u) << o.flag;
  }
  EXPECT_EQ(help_text().find("{default}"), std::string::npos);
}

TEST(Options, HelpSaysTheDefaultsTheCodeHolds) {
  const Limits defaults;
  size_t limits = 0;
  for (const OptionSpec& o : all_options()) {
    if (o.section != OptionSection::Limits) continue;
    ++limits;
    const std::string line = help_line(o);
    const size_t at = line.rfind("(default ");
    ASSERT_NE(at, std::string::npos) << line;
    const std::string value = line.substr(at + 9, line.size() - at - 10);
    EXPECT_EQ(read_limit(value), o.limit.get(defaults)) << line;
    // And the flag sets the field it says.
    Limits set;
    o.limit.set(set, o.limit.min);
    EXPECT_EQ(o.limit.get(set), o.limit.min) << o.flag;
  }
  EXPECT_EQ(limits, 9u);
  EXPECT_EQ(limit_text((uint64_t{1} << 31) - 1, true), "2G-1");
  EXPECT_EQ(limit_text(uint64_t{1} << 20, true), "1M");
  EXPECT_EQ(limit_text(65536, false), "65536");
  EXPECT_NE(help_text().find("folding, default " + std::to_string(TransformOptions{}.small_limit) + ")"),
            std::string::npos);
}

TEST(Options, EnumNamesReadBothWays) {
  for (const auto& m : kModeNames) EXPECT_EQ(enum_named<Mode>(name_of(m.value)), m.value);
  for (const auto& p : kInlinePolicyNames) EXPECT_EQ(enum_named<InlinePolicy>(name_of(p.value)), p.value);
  for (const auto& n : kNamingNames) EXPECT_EQ(enum_named<Naming>(name_of(n.value)), n.value);
  for (const auto& f : kFormatNames) EXPECT_EQ(enum_named<Format>(name_of(f.value)), f.value);
  EXPECT_EQ(name_choices<Mode>(true), "'annotate', 'specialize', 'inline' or 'check'");
  EXPECT_EQ(name_choices<Naming>(false), "copies or overload");
  EXPECT_FALSE(enum_named<Mode>("Annotate"));
}

// One option as the command line gives it and as the library's JobOptions hold it.
struct Case {
  OptionId id;
  std::vector<std::string> args;
  std::function<void(JobOptions&)> set;
};

// Where the library writes when it takes -o (a file of this test's own).
std::string output_path() {
  return (std::filesystem::temp_directory_path() / ("shapeprop_options_test_" + std::to_string(::getpid()) + ".onnx"))
      .string();
}

std::vector<Case> cases() {
  return {
      {OptionId::Inline, {"--inline", "all"}, [](JobOptions& j) { j.transform.inline_policy = InlinePolicy::All; }},
      {OptionId::Keep, {"--keep", "d::f"}, [](JobOptions& j) { j.transform.keep = {{"d", "f"}}; }},
      {OptionId::Passes, {"--passes", "fold"}, [](JobOptions& j) { j.transform.passes = {Pass::Fold}; }},
      {OptionId::PrintAfter, {"--print-after", "fold"}, [](JobOptions& j) { j.transform.print_after = {Pass::Fold}; }},
      {OptionId::PrintShapes, {"--print-shapes", "-o", "out.onnx"},
       [](JobOptions& j) {
         j.transform.infer.describe_shapes = true;
         j.output = output_path();
       }},
      {OptionId::ExpandOps, {"--expand-ops", "Gelu"}, [](JobOptions& j) { j.transform.expand.ops = {"Gelu"}; }},
      {OptionId::TargetOpset, {"--target-opset", "18"}, [](JobOptions& j) { j.transform.expand.target_opset = 18; }},
      {OptionId::Naming, {"--naming", "overload"}, [](JobOptions& j) { j.transform.naming = Naming::Overloads; }},
      {OptionId::Output, {"-o", "out.onnx"}, [](JobOptions& j) { j.output = output_path(); }},
      {OptionId::Emit, {"--emit", "text"}, [](JobOptions& j) { j.format = Format::Text; }},
      {OptionId::Override, {"--override", "lib.onnxtxt"}, [](JobOptions& j) { j.overrides = {"lib.onnxtxt"}; }},
      {OptionId::Strict, {"--strict"}, [](JobOptions& j) { j.transform.infer.strict = true; }},
      {OptionId::KeepIrVersion, {"--keep-ir-version"}, [](JobOptions& j) { j.transform.infer.annotate_functions = false; }},
      {OptionId::NoInfer, {"--no-infer"}, [](JobOptions& j) { j.infer = false; }},
      {OptionId::DebugAnalysis, {"--debug-analysis"}, [](JobOptions& j) { j.transform.infer.debug = true; }},
      {OptionId::VerifyRoundtrip, {"--verify-roundtrip"}, [](JobOptions& j) { j.verify_roundtrip = true; }},
      {OptionId::VerifyIdempotent, {"--verify-idempotent"}, [](JobOptions& j) { j.verify_idempotent = true; }},
      {OptionId::VerifyFullCheck, {"--verify-full-check"}, [](JobOptions& j) { j.verify_full_check = true; }},
      {OptionId::SetDim, {"--set-dim", "N=2"}, [](JobOptions& j) { j.shapes.dims = {{"N", 2}}; }},
      {OptionId::RenameDim, {"--rename-dim", "N=M"}, [](JobOptions& j) { j.shapes.renames = {{"N", "M"}}; }},
      {OptionId::NameDims, {"--name-dims"}, [](JobOptions& j) { j.shapes.name_dims = true; }},
  };
}

// Whether the command line refuses `args` (and the conflict's message when it does).
bool cli_refuses(std::vector<std::string> args, cli::Options& o) {
  args.insert(args.begin(), "onnx-infer-shapes");
  args.push_back("m.onnx");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  const auto done = cli::parse_args(static_cast<int>(argv.size()), argv.data(), o);
  ::testing::internal::GetCapturedStderr();
  return done.has_value();
}

// The command line and shapeprop::run refuse the same options in each mode: the request
// the command line makes of the library (its mode after what the options imply) is
// refused there exactly when the command line refuses it.
TEST(Options, TheCommandLineAndTheLibraryRefuseTheSame) {
  const auto model = testing::parse_or_fail(R"(
<ir_version: 10, opset_import: ["" : 18]>
main (float[N] x) => (float[N] y) {
  y = Abs (x)
}
)");
  size_t refused = 0, taken = 0;
  for (const std::string mode : {"annotate", "specialize", "inline", "check"}) {
    for (const Case& c : cases()) {
      for (bool with_passes : {false, true}) {  // --print-after with --passes that lack it
        std::vector<std::string> args = {"--mode", mode};
        args.insert(args.end(), c.args.begin(), c.args.end());
        if (with_passes) {
          if (c.id != OptionId::PrintAfter) continue;
          args.insert(args.end(), {"--passes", "dce"});
        }
        cli::Options o;
        const bool cli = cli_refuses(args, o);
        JobOptions job;
        job.kind = o.mode == Mode::Check ? JobKind::Check : o.transforms() ? JobKind::Transform : JobKind::Annotate;
        job.transform.inline_policy = o.inlining();
        job.bytes = model.SerializeAsString();
        c.set(job);
        if (with_passes) job.transform.passes = {Pass::Dce};
        const auto done = run(job);
        const std::string what = mode + " " + std::string(option_spec(c.id).flag) + (with_passes ? " --passes dce" : "");
        EXPECT_EQ(cli, !done) << what;
        (cli ? refused : taken)++;
        if (!done) {  // naming the option (or --passes, which comes first in a check)
          const std::string_view named = with_passes && mode == "check" ? "passes" : option_spec(c.id).key;
          EXPECT_NE(done.error().message.find(named), std::string::npos) << what << ": " << done.error().message;
        }
      }
    }
  }
  std::filesystem::remove(output_path());
  EXPECT_GT(refused, 20u);
  EXPECT_GT(taken, 40u);
}

TEST(Options, ConflictsAreSpelledForEachSide) {
  OptionUse use;
  use.mode = Mode::Check;
  use.given.set(static_cast<size_t>(OptionId::VerifyIdempotent));
  auto conflict = find_conflict(use);
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->message(Conflict::Spelling::Flags), "--mode check writes nothing and takes no --verify-*");
  EXPECT_EQ(conflict->message(Conflict::Spelling::Keys), "a check writes nothing, and takes no verify_idempotent");

  use = {};
  use.given.set(static_cast<size_t>(OptionId::PrintShapes));
  use.given.set(static_cast<size_t>(OptionId::NoInfer));
  conflict = find_conflict(use);
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->message(Conflict::Spelling::Flags),
            "--print-shapes lists what inference proves, and --no-infer runs none");
  EXPECT_EQ(conflict->message(Conflict::Spelling::Keys),
            "print_shapes lists what inference proves, and infer = false runs none");

  use = {};
  use.mode = Mode::Specialize;
  use.passes = {Pass::Dce};
  use.print_after = {Pass::Fold};
  conflict = find_conflict(use);
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->message(Conflict::Spelling::Flags), "--print-after fold names a pass --passes does not run");
  use.passes.push_back(Pass::Fold);
  EXPECT_FALSE(find_conflict(use));

  // The types on stdout are the command line's: the library takes --print-shapes with a
  // format and no file.
  use = {};
  use.given.set(static_cast<size_t>(OptionId::PrintShapes));
  use.given.set(static_cast<size_t>(OptionId::Emit));
  EXPECT_FALSE(find_conflict(use));
  use.shapes_on_stdout = true;
  conflict = find_conflict(use);
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->message(Conflict::Spelling::Flags),
            "--print-shapes writes the types on stdout: write the model with -o PATH, not --emit alone");
}

}  // namespace
}  // namespace shapeprop
