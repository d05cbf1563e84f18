#include <gtest/gtest.h>

#include "shapeprop/diagnostics.h"

namespace shapeprop {
namespace {

TEST(Diagnostic, CompilerStyleOneLine) {
  auto d = Diagnostic::error("bad\nthing").in_file("m.onnxtxt", 3, 7);
  d.call_path = {"graph 'g'", "node 'n' (f)"};
  EXPECT_EQ(d.str(), "m.onnxtxt:3:7: error: bad thing [at graph 'g' > node 'n' (f)]");
  EXPECT_EQ(Diagnostic::warning("w").str(), "warning: w");
}

TEST(Result, HoldsValueOrError) {
  Result<int> ok = 3;
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 3);
  Result<int> bad = Diagnostic::error("nope");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "nope");
  EXPECT_TRUE(has_errors({Diagnostic::warning("a"), Diagnostic::error("b")}));
  EXPECT_FALSE(has_errors({Diagnostic::warning("a")}));
}

// Diagnostics stay one readable line whatever the model holds (issue 10, row 11).
TEST(Diagnostic, LongNamesAreClippedInTheMiddle) {
  const std::string name(100000, 'A');
  auto d = Diagnostic::error("No Op registered for " + name + " with domain_version of 18").in_file("m.onnx");
  const std::string s = d.str();
  EXPECT_LT(s.size(), 200u);
  EXPECT_EQ(s.rfind("m.onnx: error: No Op registered for AAAA", 0), 0u) << s;
  EXPECT_NE(s.find("AAA...AAA"), std::string::npos) << s;
  EXPECT_NE(s.find("AAA with domain_version of 18"), std::string::npos) << s;
}

TEST(Diagnostic, LongMessagesPathsAndFilesAreBounded) {
  std::string words;
  for (int i = 0; i < 10000; ++i) words += "word ";
  Diagnostic d = Diagnostic::error(words).in_file(std::string(5000, 'f') + "/m.onnx");
  for (int i = 0; i < 1000; ++i) d.call_path.push_back("node '" + std::to_string(i) + "' (" + std::string(500, 'x') + ")");
  const std::string s = d.str();
  EXPECT_LT(s.size(), 2000u);
  EXPECT_NE(s.find("/m.onnx: error: word word"), std::string::npos) << s;
  EXPECT_NE(s.find("[at node '0' (xxx"), std::string::npos) << s;
  EXPECT_NE(s.find(" > (993 more) > node '996' ("), std::string::npos) << s;
  EXPECT_NE(s.find("node '999' (x"), std::string::npos) << s;
}

TEST(Diagnostic, ControlCharactersAndUtf8) {
  EXPECT_EQ(Diagnostic::error("a\tb\x1b[31mc\x7f").str(), "error: a b?[31mc?");
  // Clipping never splits a UTF-8 character: each kept piece is whole "é"s.
  std::string e;
  for (int i = 0; i < 100; ++i) e += "\xc3\xa9";
  const std::string s = Diagnostic::error(e).str();
  const std::string kept = s.substr(std::string("error: ").size());
  const auto dots = kept.find("...");
  ASSERT_NE(dots, std::string::npos) << s;
  EXPECT_EQ(dots % 2, 0u);
  EXPECT_EQ((kept.size() - dots - 3) % 2, 0u);
}

TEST(Diagnostics, FirstAndCount) {
  Diagnostics all = {Diagnostic::warning("w"), Diagnostic::error("first").in_file("m"), Diagnostic::error("second"),
                     Diagnostic::error("third")};
  EXPECT_EQ(first_and_count(all), "m: error: first (and 2 more errors)");
  all.pop_back();
  EXPECT_EQ(first_and_count(all), "m: error: first (and 1 more error)");
  EXPECT_EQ(first_and_count(all, Severity::Warning), "warning: w");
  EXPECT_EQ(first_and_count({Diagnostic::warning("w")}), "");
}

}  // namespace
}  // namespace shapeprop
