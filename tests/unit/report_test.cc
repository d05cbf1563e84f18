// Unit tests of the report's pieces: JSON writing, counting a model, the terminal's table,
// phases, the progress line, and the assumption record in metadata_props.
#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <cstdio>
#include <string>
#include <thread>

#include "infer/analysis_record.h"  // internal to the library
#include "report/json_writer.h"     // internal to the library
#include "shapeprop/passes.h"
#include "shapeprop/phases.h"
#include "terminal/progress.h"
#include "terminal/table.h"
#include "shapeprop/report.h"
#include "shapeprop/specialize.h"
#include "test_util.h"

namespace shapeprop {
namespace {

using report::json_quote;
using report::JsonWriter;

TEST(ReportJson, QuotesWhatJsonNeedsAndKeepsUtf8) {
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
  EXPECT_EQ(json_quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_quote("line\nnext\ttab\x01"), "\"line\\nnext\\ttab\\u0001\"");
  EXPECT_EQ(json_quote("caf\xC3\xA9 \xE2\x89\xA5 1"), "\"caf\xC3\xA9 \xE2\x89\xA5 1\"");
}

TEST(ReportJson, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const std::string replacement = "\xEF\xBF\xBD";
  EXPECT_EQ(json_quote("a\xFFz"), "\"a" + replacement + "z\"");
  EXPECT_EQ(json_quote("\xC3"), "\"" + replacement + "\"");                    // truncated
  EXPECT_EQ(json_quote("\xC0\xAF"), "\"" + replacement + replacement + "\"");  // overlong '/'
  EXPECT_EQ(json_quote("\xED\xA0\x80"), "\"" + replacement + replacement + replacement + "\"");  // a surrogate
}

TEST(ReportJson, NestsAndIndents) {
  JsonWriter w;
  w.begin_object();
  w.key("a").integer(-1);
  w.key("b").begin_array().boolean(true).null().real(0.5).end();
  w.key("c").begin_object().end();
  w.key("d").begin_array().end();
  w.key("e").real(std::numeric_limits<double>::infinity());
  w.end();
  EXPECT_EQ(w.text(), "{\n  \"a\": -1,\n  \"b\": [\n    true,\n    null,\n    0.500000\n  ],\n  \"c\": {},\n  \"d\": [],\n"
                      "  \"e\": null\n}\n");
}

const char* const kModel = R"(
<ir_version: 8, opset_import: ["" : 18, "pkg.x" : 1]>
main (float[N] x) => (y) {
  a = pkg.x.f (x)
  b = CastLike (a, x)
  y = If (c) <then_branch = g1 () => (t) { t = Identity (b) }, else_branch = g2 () => (e) { e = pkg.x.f (b) }>
}

<domain: "pkg.x", opset_import: ["" : 18]>
f (p) => (q) {
  q = Relu (p)
}
)";

TEST(ReportCounts, CountsTheGraphSubgraphsAndFunctions) {
  const auto model = testing::parse_or_fail(kModel);
  const ModelCounts c = count_model(model);
  EXPECT_EQ(c.nodes, 6u);  // 3 in the graph, 1 in each branch, 1 in f
  EXPECT_EQ(c.ifs, 1u);
  EXPECT_EQ(c.castlikes, 1u);
  EXPECT_EQ(c.functions, 1u);
  EXPECT_EQ(c.calls, 2u);
  EXPECT_EQ(c.function_names, std::vector<std::string>{"pkg.x.f"});
  EXPECT_EQ((c.ops), (std::map<std::string, size_t>{{"CastLike", 1}, {"Identity", 1}, {"If", 1}, {"Relu", 1}, {"pkg.x.f", 2}}));
}

TEST(ReportTable, ShowsTotalsThenTheOpsThatChangedMost) {
  ModelCounts before, after;
  before.nodes = 10, after.nodes = 4;
  before.ifs = 2;
  before.ops = {{"If", 2}, {"Relu", 3}, {"Add", 5}};
  after.ops = {{"Relu", 3}, {"Add", 1}};
  const std::string table = counts_table(before, after, 2);
  EXPECT_NE(table.find("before"), std::string::npos);
  EXPECT_NE(table.find("  nodes                                           10         4\n"), std::string::npos) << table;
  EXPECT_NE(table.find("  If                                               2         0\n"), std::string::npos) << table;
  // Add changed by 4, If by 2, Relu not at all (and is cut by the limit of 2 rows).
  EXPECT_LT(table.find("op Add"), table.find("op If"));
  EXPECT_EQ(table.find("op Relu"), std::string::npos);
  EXPECT_NE(table.find("(1 more op types; --report FILE.json lists every one)"), std::string::npos);
  // A long name keeps its end, within the label's 40 columns.
  before.ops = {{std::string(60, 'x') + "_the_end", 1}};
  EXPECT_NE(counts_table(before, after).find("  ..." + std::string(29, 'x') + "_the_end         1         0\n"),
            std::string::npos)
      << counts_table(before, after);
}

TEST(ReportPhases, AddUpByName) {
  std::vector<PhaseTime> phases;
  std::vector<std::string> announced;
  auto note = [&](std::string_view p) { announced.emplace_back(p); };
  { PhaseClock a(phases, "analysis", note); }
  { PhaseClock b(phases, "annotation", note); }
  PhaseClock again(phases, "analysis", note);
  again.stop();
  again.stop();  // once
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].phase, "analysis");
  EXPECT_EQ(phases[1].phase, "annotation");
  EXPECT_EQ(announced, (std::vector<std::string>{"analysis", "annotation", "analysis"}));
  add_phases(phases, {{"write", 1.5}, {"annotation", 2.0}});
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_GE(phases[1].seconds, 2.0);
  EXPECT_EQ(phases[2].seconds, 1.5);
}

std::string contents(std::FILE* f) {
  std::fflush(f);
  std::rewind(f);
  std::string s;
  for (int c; (c = std::fgetc(f)) != EOF;) s += static_cast<char>(c);
  return s;
}

TEST(ReportProgress, DrawsThePhaseAfterTheDelayAndErasesItAtTheEnd) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    ProgressLine line(out, "tool", std::chrono::milliseconds(0), std::chrono::milliseconds(1));
    line.phase("analysis");
    // Wait (without judging how long it takes) until the line is drawn.
    for (int i = 0; i < 10000; ++i) {
      {
        ProgressLine::Pause pause(&line);  // the stream is the test's while paused
        const std::string text = contents(out);
        std::fseek(out, 0, SEEK_END);
        if (text.find("tool: analysis (") != std::string::npos) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  const std::string text = contents(out);
  EXPECT_EQ(text.rfind("\rtool: analysis (", 0), 0u) << text;
  EXPECT_EQ(text.substr(text.size() - 4), "\r\033[K");  // erased
  std::fclose(out);
}

TEST(ReportProgress, AShortRunPrintsNothing) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    ProgressLine line(out, "tool", std::chrono::hours(1));
    line.phase("analysis");
  }
  EXPECT_EQ(contents(out), "");
  std::fclose(out);
}

TEST(ReportAssumptions, RecordedOnceAndKeptAsTheyAre) {
  onnx::ModelProto model;
  infer::record_assumptions(model, {}, {});
  EXPECT_EQ(model.metadata_props_size(), 0);
  const std::vector<AssumptionUse> uses = {{"Equal", {"graph 'g'", "node 'e' (Equal)"}, {}}};
  infer::record_assumptions(model, uses, {});
  infer::record_assumptions(model, uses, {});
  ASSERT_EQ(model.metadata_props_size(), 1);
  EXPECT_EQ(model.metadata_props(0).key(), kAssumptionsKey);
  EXPECT_EQ(model.metadata_props(0).value(), "symbolic dims >= 1");
  // Someone else's value under the key keeps it, with ours added.
  model.mutable_metadata_props(0)->set_value("theirs");
  infer::record_assumptions(model, uses, {});
  EXPECT_EQ(model.metadata_props(0).value(), "theirs; symbolic dims >= 1");
  // Ranges are recorded whether or not a decision relied on them, each once.
  const std::map<std::string, DimRange> ranges = {{"seq", {1, 128}}, {"batch", {1, 8}}};
  infer::record_assumptions(model, {}, ranges);
  infer::record_assumptions(model, uses, ranges);
  EXPECT_EQ(model.metadata_props(0).value(), "theirs; symbolic dims >= 1; 1 <= batch <= 8; 1 <= seq <= 128");
  std::vector<AssumptionUse> merged = uses;
  infer::merge_assumptions(merged, {uses[0], {"Less", {"graph 'g'", "node 'l' (Less)"}, {}}});
  EXPECT_EQ(merged.size(), 2u);
}

TEST(ReportJson, WritesTheRunAndFailsOnlyWhereItCannotWrite) {
  Report r;
  r.input = "m.onnx";
  r.ok = true;
  r.summary = {"1 call site"};
  r.diagnostics.push_back(Diagnostic::warning("careful").in_file("m.onnx"));
  const std::string json = to_json(r);
  EXPECT_EQ(json.rfind("{\n  \"format\": \"shapeprop-report\",\n  \"version\": 1,", 0), 0u);
  EXPECT_NE(json.find("\"before\": null"), std::string::npos);
  EXPECT_NE(json.find("\"text\": \"m.onnx: warning: careful\""), std::string::npos);
  testing::TempDir dir;
  EXPECT_TRUE(write_report(r, dir.path() / "r.json").ok());
  EXPECT_FALSE(write_report(r, dir.path() / "missing" / "r.json").ok());
}

// Each counter of passes.def set to a count of its own (100, 101, ...), so that a counter
// the report or the text leaves out, or prints under another's name, shows.
TransformResult every_counter_counted() {
  TransformResult t;
  size_t n = 100;
  for (const CounterInfo& c : all_counters()) t.stats.counters[c.id] = n++;
  return t;
}

TEST(ReportCounters, EveryRegisteredCounterIsInTheReportUnderItsPass) {
  Report r;
  r.mode = "inline";
  r.add(every_counter_counted());
  const std::string json = to_json(r);
  const size_t rewrites = json.find("\"rewrites\": {");
  ASSERT_NE(rewrites, std::string::npos);
  size_t n = 100;
  for (const CounterInfo& c : all_counters()) {
    // Under its pass's object, which comes after "rewrites".
    const size_t pass = json.find("\"" + std::string(pass_info(c.pass).name) + "\": {", rewrites);
    ASSERT_NE(pass, std::string::npos) << pass_info(c.pass).name;
    const size_t end = json.find('}', pass);
    const size_t at = json.find("\"" + std::string(c.key) + "\": " + std::to_string(n++), pass);
    EXPECT_TRUE(at != std::string::npos && at < end) << c.key << " is not in " << pass_info(c.pass).name << "'s counts";
  }
}

TEST(ReportCounters, EveryRegisteredCounterIsInTheSummaryOrTheDebugLines) {
  const TransformResult t = every_counter_counted();
  const std::string text = summary_line(t.stats) + "\n" + counter_lines(t.stats);
  size_t n = 100;
  for (const CounterInfo& c : all_counters()) {
    const std::string count = std::to_string(n++);
    EXPECT_TRUE(text.find(count + " " + std::string(c.many)) != std::string::npos ||
                text.find(std::string(c.many) + " " + count) != std::string::npos)
        << c.key << " (" << c.many << " " << count << ") is in neither:\n"
        << text;
  }
  // The debug lines name every pass that has counters.
  for (const PassInfo& p : all_passes()) {
    if (p.kind == PassKind::Module || p.id == Pass::Fold) {
      EXPECT_NE(counter_lines(t.stats).find(" " + std::string(p.name) + " ("), std::string::npos) << p.name;
    }
  }
}

TEST(ReportCounters, PassNamesAreUniqueAndFound) {
  for (const PassInfo& p : all_passes()) {
    ASSERT_TRUE(find_pass(p.name).has_value()) << p.name;
    EXPECT_EQ(*find_pass(p.name), p.id);
    EXPECT_FALSE(p.description.empty());
  }
  EXPECT_FALSE(find_pass("no-such-pass").has_value());
  for (const CounterInfo& c : all_counters()) EXPECT_EQ(counter_info(c.id).key, c.key);
}

}  // namespace
}  // namespace shapeprop
