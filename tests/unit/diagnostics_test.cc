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

}  // namespace
}  // namespace shapeprop
