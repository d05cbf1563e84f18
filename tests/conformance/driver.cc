// shapeprop-conformance: runs a type-inference engine over ONNX's backend node tests.
//
// For each test folder (model.onnx + data sets) it removes every type the model records
// except the graph inputs' (graph outputs, value_info of the graph, its subgraphs and its
// functions), runs the engine, and classifies the types the engine gives the graph outputs
// against the declared ones (see classify.h). A test's verdict is the most severe over its
// outputs. Prints "<test>: <verdict>[: detail]" per test in name order, then the totals.
//
// With --versus NAME, each test is also run with a second engine, and the first engine's
// output types are classified against the second's: a test where the first knows less
// ("behind") or states another fact ("contradicts") is printed and counted (where the
// second engine's facts are confirmed by the test's declared types), so that
// "shapeprop is never less precise than ONNX" is a per-test, per-output check rather than
// a comparison of two totals.
//
// Exit status: 0 success; 1 an --expect-* bound is violated; 2 bad usage, unknown engine,
// or no test folder found.
#include <algorithm>
#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "classify.h"
#include "engine.h"

namespace shapeprop::conformance {
namespace {

namespace fs = std::filesystem;
using ValueInfos = google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>;

constexpr int kExitExpectationFailed = 1;
constexpr int kExitCannotRun = 2;

constexpr std::string_view kUsage =
    "usage: shapeprop-conformance [--engine NAME] [--dir NODE_TESTS_DIR] [--filter SUBSTR] [--verbose]\n"
    "                             [--expect-min-agree N] [--expect-max-error N]\n"
    "                             [--versus NAME [--expect-max-behind N] [--accept-behind TEST]...]\n"
    "  --engine NAME          engine to run (default: onnx)\n"
    "  --dir DIR              ONNX backend node tests folder (default: " SHAPEPROP_NODE_TESTS_DIR ")\n"
    "  --filter SUBSTR        run only tests whose folder name contains SUBSTR\n"
    "  --verbose              also print every output's declared and inferred types\n"
    "  --expect-min-agree N   exit 1 if fewer than N tests agree\n"
    "  --expect-max-error N   exit 1 if more than N tests end in error\n"
    "  --versus NAME          also run engine NAME and compare the outputs' types with its own\n"
    "  --expect-max-behind N  exit 1 if in more than N tests the engine knows less than, or\n"
    "                         contradicts, the --versus engine\n"
    "  --accept-behind TEST   TEST may be behind the --versus engine without counting (the\n"
    "                         caller says why); exit 1 if it is not behind any more\n";

struct Options {
  std::string engine = "onnx";
  fs::path dir = SHAPEPROP_NODE_TESTS_DIR;
  std::string filter;
  bool verbose = false;
  bool help = false;
  std::optional<long> expect_min_agree;
  std::optional<long> expect_max_error;
  std::string versus;
  std::optional<long> expect_max_behind;
  std::set<std::string> accepted_behind;  // --accept-behind: tests known to be behind, with reasons kept by the caller
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

long parse_count(std::string_view flag, std::string_view text) {
  long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0)
    throw UsageError(std::string(flag) + " needs a non-negative integer, got '" + std::string(text) + "'");
  return value;
}

Options parse_args(std::span<char* const> args) {
  Options options;
  for (auto it = args.begin(); it != args.end(); ++it) {
    const std::string_view flag = *it;
    const auto value = [&]() -> std::string_view {
      if (std::next(it) == args.end()) throw UsageError(std::string(flag) + " needs a value");
      return *++it;
    };
    if (flag == "--engine") options.engine = value();
    else if (flag == "--dir") options.dir = value();
    else if (flag == "--filter") options.filter = value();
    else if (flag == "--verbose") options.verbose = true;
    else if (flag == "--help" || flag == "-h") options.help = true;
    else if (flag == "--expect-min-agree") options.expect_min_agree = parse_count(flag, value());
    else if (flag == "--expect-max-error") options.expect_max_error = parse_count(flag, value());
    else if (flag == "--versus") options.versus = value();
    else if (flag == "--expect-max-behind") options.expect_max_behind = parse_count(flag, value());
    else if (flag == "--accept-behind") options.accepted_behind.emplace(value());
    else throw UsageError("unknown argument '" + std::string(flag) + "'");
  }
  if (options.expect_max_behind && options.versus.empty()) throw UsageError("--expect-max-behind needs --versus");
  return options;
}

// Test folders whose name contains `filter`, sorted so that runs are reproducible.
std::vector<fs::path> find_tests(const fs::path& dir, std::string_view filter) {
  std::vector<fs::path> tests;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_directory() && entry.path().filename().string().find(filter) != std::string::npos)
      tests.push_back(entry.path());
  std::ranges::sort(tests);
  return tests;
}

onnx::ModelProto load_model(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::ostringstream bytes;
  bytes << in.rdbuf();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes.str())) throw std::runtime_error("cannot parse " + path.string());
  return model;
}

void strip_value_info(onnx::GraphProto& graph);

// If branches and Loop/Scan bodies record intermediate types as well. Their own inputs and
// outputs stay typed: they are the subgraph's signature, not a result of inference.
void strip_subgraphs(google::protobuf::RepeatedPtrField<onnx::NodeProto>& nodes) {
  for (auto& node : nodes)
    for (auto& attribute : *node.mutable_attribute()) {
      if (attribute.has_g()) strip_value_info(*attribute.mutable_g());
      for (auto& graph : *attribute.mutable_graphs()) strip_value_info(graph);
    }
}

void strip_value_info(onnx::GraphProto& graph) {
  graph.clear_value_info();
  strip_subgraphs(*graph.mutable_node());
}

// Leaves the engine nothing but the graph inputs' types (and initializers) to start from,
// so it cannot pass a recorded type off as an inferred one.
void strip_types(onnx::ModelProto& model) {
  for (auto& output : *model.mutable_graph()->mutable_output()) output.clear_type();
  strip_value_info(*model.mutable_graph());
  for (auto& function : *model.mutable_functions()) {
    function.clear_value_info();
    strip_subgraphs(*function.mutable_node());
  }
}

struct TestReport {
  Classification result;
  std::vector<std::string> notes;  // extra lines for --verbose
  Classification versus;           // the engine's outputs against the --versus engine's
};

std::vector<std::string> describe_outputs(const ValueInfos& declared, const ValueInfos& inferred) {
  std::vector<std::string> lines;
  for (int i = 0; i < std::min(declared.size(), inferred.size()); ++i)
    lines.push_back(describe_output(declared[i], inferred[i]) + ": " +
                    std::string(to_string(classify(declared[i].type(), inferred[i].type()))));
  return lines;
}

// Never throws: any failure becomes an error verdict, so one bad test cannot stop the run.
TestReport run_test(const fs::path& folder, Engine& engine, Engine* versus) {
  try {
    onnx::ModelProto model = load_model(folder / "model.onnx");
    const ValueInfos declared = model.graph().output();
    strip_types(model);
    onnx::ModelProto other = model;
    const EngineResult run = engine.infer(model);
    if (!run.ok) return {{Verdict::error, run.error}, {}, {}};
    TestReport report{classify_outputs(declared, model.graph().output()),
                      describe_outputs(declared, model.graph().output()), {}};
    // An engine that fails on the test knows nothing: nothing to be behind. Nor is a fact
    // the test's declared types do not confirm: ONNX states seq(float) scalars for
    // test_loop13_seq, whose data holds rank-1 elements.
    if (versus && versus->infer(other).ok) {
      const Verdict confirmed = classify_outputs(declared, other.graph().output()).verdict;
      if (confirmed == Verdict::agree || confirmed == Verdict::less_precise)
        report.versus = classify_outputs(other.graph().output(), model.graph().output());
    }
    return report;
  } catch (const std::exception& e) {
    return {{Verdict::error, e.what()}, {}, {}};
  } catch (...) {
    return {{Verdict::error, "unknown exception"}, {}, {}};
  }
}

// Engine messages can span lines; the report keeps one line per test.
std::string one_line(std::string text) {
  std::ranges::replace(text, '\n', ' ');
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

void print_report(std::ostream& out, const std::string& test, const TestReport& report, bool verbose) {
  out << test << ": " << to_string(report.result.verdict);
  if (!report.result.detail.empty()) out << ": " << one_line(report.result.detail);
  out << '\n';
  if (report.versus.verdict == Verdict::less_precise || report.versus.verdict == Verdict::disagree)
    out << "  behind the --versus engine: " << to_string(report.versus.verdict) << ": " << one_line(report.versus.detail)
        << '\n';
  if (!verbose) return;
  for (const auto& note : report.notes) out << "  " << note << '\n';
}

using Totals = std::array<long, kVerdictCount>;

long count(const Totals& totals, Verdict verdict) { return totals[static_cast<std::size_t>(verdict)]; }

void print_totals(std::ostream& out, std::string_view engine, const Totals& totals, std::size_t tests) {
  out << "engine " << engine << ": " << tests << " tests: ";
  constexpr Verdict kOrder[] = {Verdict::agree, Verdict::disagree, Verdict::less_precise, Verdict::more_precise,
                                Verdict::error};
  for (const Verdict verdict : kOrder)
    out << count(totals, verdict) << ' ' << to_string(verdict) << (verdict == Verdict::error ? "\n" : ", ");
}

// Reports every violated bound, so that one run shows all of them.
bool meets_expectations(const Options& options, const Totals& totals, long behind) {
  bool met = true;
  if (options.expect_max_behind && behind > *options.expect_max_behind) {
    std::cerr << "FAIL: in " << behind << " tests the engine knows less than, or contradicts, " << options.versus
              << ", expected at most " << *options.expect_max_behind << '\n';
    met = false;
  }
  if (options.expect_min_agree && count(totals, Verdict::agree) < *options.expect_min_agree) {
    std::cerr << "FAIL: " << count(totals, Verdict::agree) << " tests agree, expected at least "
              << *options.expect_min_agree << '\n';
    met = false;
  }
  if (options.expect_max_error && count(totals, Verdict::error) > *options.expect_max_error) {
    std::cerr << "FAIL: " << count(totals, Verdict::error) << " tests end in error, expected at most "
              << *options.expect_max_error << '\n';
    met = false;
  }
  return met;
}

std::string engine_names() {
  std::string names;
  for (const auto& entry : engines()) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  return names;
}

int run(const Options& options) {
  const std::unique_ptr<Engine> engine = make_engine(options.engine);
  if (!engine) {
    std::cerr << "unknown engine '" << options.engine << "' (known: " << engine_names() << ")\n";
    return kExitCannotRun;
  }
  std::unique_ptr<Engine> versus;
  if (!options.versus.empty() && !(versus = make_engine(options.versus))) {
    std::cerr << "unknown engine '" << options.versus << "' (known: " << engine_names() << ")\n";
    return kExitCannotRun;
  }
  if (!fs::is_directory(options.dir)) {
    std::cerr << "no such folder: " << options.dir.string()
              << " (ONNX's backend node tests: bash scripts/setup.sh installs them with ONNX)\n";
    return kExitCannotRun;
  }
  const std::vector<fs::path> tests = find_tests(options.dir, options.filter);
  if (tests.empty()) {
    std::cerr << "no test folders in " << options.dir.string()
              << (options.filter.empty() ? "" : " matching '" + options.filter + "'") << '\n';
    return kExitCannotRun;
  }
  Totals totals{};
  long behind = 0;
  std::set<std::string> stale = options.accepted_behind;  // accepted, not found behind
  for (const auto& test : tests) {
    const TestReport report = run_test(test, *engine, versus.get());
    ++totals[static_cast<std::size_t>(report.result.verdict)];
    const std::string name = test.filename().string();
    if (report.versus.verdict == Verdict::less_precise || report.versus.verdict == Verdict::disagree) {
      if (options.accepted_behind.count(name))
        stale.erase(name);
      else
        ++behind;
    }
    print_report(std::cout, name, report, options.verbose);
  }
  print_totals(std::cout, engine->name(), totals, tests.size());
  if (versus)
    std::cout << "behind " << versus->name() << " in " << behind << " tests (and in "
              << options.accepted_behind.size() - stale.size() << " accepted)\n";
  // Only tests that were run can be found stale.
  bool fresh = true;
  for (const auto& name : stale)
    if (std::any_of(tests.begin(), tests.end(), [&](const fs::path& t) { return t.filename() == name; })) {
      std::cerr << "FAIL: " << name << " is accepted as behind " << options.versus << " but is not: drop --accept-behind\n";
      fresh = false;
    }
  std::cout.flush();
  return meets_expectations(options, totals, behind) && fresh ? 0 : kExitExpectationFailed;
}

}  // namespace
}  // namespace shapeprop::conformance

int main(int argc, char** argv) {
  using namespace shapeprop::conformance;
  try {
    const Options options = parse_args(std::span<char* const>(argv + 1, static_cast<std::size_t>(argc - 1)));
    if (options.help) {
      std::cout << kUsage;
      return 0;
    }
    return run(options);
  } catch (const UsageError& e) {
    std::cerr << e.what() << '\n' << kUsage;
    return kExitCannotRun;
  } catch (const std::exception& e) {
    std::cerr << "shapeprop-conformance: " << e.what() << '\n';
    return kExitCannotRun;
  }
}
