// Unit tests of the verdicts the conformance driver gives inferred types (classify.h).
#include "classify.h"

#include <gtest/gtest.h>

#include "onnx/defs/parser.h"

namespace shapeprop::conformance {
namespace {

// A type from ONNX's text syntax: "float[3,N,?]", "float" (scalar), "float[]" (unknown rank).
onnx::TypeProto type(const char* text) {
  onnx::TypeProto result;
  const auto status = onnx::OnnxParser::Parse(result, text);
  EXPECT_TRUE(status.IsOK()) << text << ": " << status.ErrorMessage();
  return result;
}

Verdict classify(const char* declared, const char* inferred) {
  return conformance::classify(type(declared), type(inferred));
}

onnx::ValueInfoProto output(const char* name, const onnx::TypeProto& t) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  *info.mutable_type() = t;
  return info;
}

google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> outputs(std::initializer_list<onnx::ValueInfoProto> list) {
  return {list.begin(), list.end()};
}

TEST(Classify, SameTypeAgrees) {
  EXPECT_EQ(classify("float[3,4]", "float[3,4]"), Verdict::agree);
  EXPECT_EQ(classify("float", "float"), Verdict::agree);
  EXPECT_EQ(classify("float[]", "float[]"), Verdict::agree);
}

TEST(Classify, DimParamAgreesWithAnyDimWithoutValue) {
  EXPECT_EQ(classify("float[N,4]", "float[M,4]"), Verdict::agree);
  EXPECT_EQ(classify("float[N,4]", "float[?,4]"), Verdict::agree);
  EXPECT_EQ(classify("float[?,4]", "float[unk__0,4]"), Verdict::agree);
}

TEST(Classify, DifferentElemTypeDisagrees) {
  EXPECT_EQ(classify("float[3,4]", "int64[3,4]"), Verdict::disagree);
}

TEST(Classify, DifferentDimValueDisagrees) { EXPECT_EQ(classify("float[3,4]", "float[3,5]"), Verdict::disagree); }

TEST(Classify, DifferentRankDisagrees) {
  EXPECT_EQ(classify("float[3,4]", "float[12]"), Verdict::disagree);
  EXPECT_EQ(classify("float", "float[1]"), Verdict::disagree);
}

TEST(Classify, DifferentKindDisagrees) { EXPECT_EQ(classify("float[3]", "seq(float[3])"), Verdict::disagree); }

TEST(Classify, MissingShapeIsLessPrecise) {
  EXPECT_EQ(classify("float[3,4]", "float[]"), Verdict::less_precise);
  EXPECT_EQ(classify("float", "float[]"), Verdict::less_precise);
}

TEST(Classify, MissingTypeIsLessPrecise) {
  EXPECT_EQ(conformance::classify(type("float[3]"), onnx::TypeProto()), Verdict::less_precise);
}

TEST(Classify, UndefinedElemTypeIsLessPrecise) {
  onnx::TypeProto inferred = type("float[3]");
  inferred.mutable_tensor_type()->set_elem_type(onnx::TensorProto::UNDEFINED);
  EXPECT_EQ(conformance::classify(type("float[3]"), inferred), Verdict::less_precise);
}

TEST(Classify, DimWithoutValueIsLessPrecise) {
  EXPECT_EQ(classify("float[3,4]", "float[3,N]"), Verdict::less_precise);
  EXPECT_EQ(classify("float[3,4]", "float[3,?]"), Verdict::less_precise);
}

TEST(Classify, ExtraKnowledgeIsMorePrecise) {
  EXPECT_EQ(classify("float[N,4]", "float[3,4]"), Verdict::more_precise);
  EXPECT_EQ(classify("float[]", "float[3]"), Verdict::more_precise);
  EXPECT_EQ(conformance::classify(onnx::TypeProto(), type("float[3]")), Verdict::more_precise);
}

TEST(Classify, MostSevereDifferenceWins) {
  EXPECT_EQ(classify("float[N,4]", "float[3,?]"), Verdict::less_precise);
  EXPECT_EQ(classify("float[N,4]", "int64[3,4]"), Verdict::disagree);
  EXPECT_EQ(classify("float[3,4]", "float[?,5]"), Verdict::disagree);
}

TEST(Classify, ComparesContainedTypes) {
  EXPECT_EQ(classify("seq(float[3])", "seq(float[3])"), Verdict::agree);
  EXPECT_EQ(classify("seq(float[3])", "seq(float[?])"), Verdict::less_precise);
  EXPECT_EQ(classify("optional(float[3])", "optional(int32[3])"), Verdict::disagree);
  EXPECT_EQ(classify("map(int64, float[])", "map(int64, float[2])"), Verdict::more_precise);
  EXPECT_EQ(classify("map(int64, float[2])", "map(string, float[2])"), Verdict::disagree);
}

TEST(ClassifyOutputs, MostSevereOutputWinsAndIsNamed) {
  const auto declared = outputs({output("a", type("float[3]")), output("b", type("float[2]")),
                                 output("c", type("int64[2]"))});
  const auto inferred = outputs({output("a", type("float[3]")), output("b", type("float[?]")),
                                 output("c", type("int64[]"))});
  const Classification result = classify_outputs(declared, inferred);
  EXPECT_EQ(result.verdict, Verdict::less_precise);
  EXPECT_EQ(result.detail, "output 'b': declared float[2], inferred float[?]");
}

TEST(ClassifyOutputs, AgreementHasNoDetail) {
  const auto declared = outputs({output("y", type("float[3]"))});
  const Classification result = classify_outputs(declared, declared);
  EXPECT_EQ(result.verdict, Verdict::agree);
  EXPECT_EQ(result.detail, "");
}

TEST(ClassifyOutputs, ChangedOutputCountIsAnError) {
  const auto declared = outputs({output("y", type("float[3]"))});
  EXPECT_EQ(classify_outputs(declared, outputs({})).verdict, Verdict::error);
}

TEST(Describe, UsesOnnxTextSyntax) {
  EXPECT_EQ(describe(type("float[3,N,?]")), "float[3,N,?]");
  EXPECT_EQ(describe(type("float")), "float");
  EXPECT_EQ(describe(type("float[]")), "float[]");
  EXPECT_EQ(describe(type("seq(int64[2])")), "seq(int64[2])");
  EXPECT_EQ(describe(onnx::TypeProto()), "(none)");
}

TEST(Verdict, Names) {
  EXPECT_EQ(to_string(Verdict::agree), "agree");
  EXPECT_EQ(to_string(Verdict::more_precise), "more precise");
  EXPECT_EQ(to_string(Verdict::less_precise), "less precise");
  EXPECT_EQ(to_string(Verdict::disagree), "disagree");
  EXPECT_EQ(to_string(Verdict::error), "error");
}

}  // namespace
}  // namespace shapeprop::conformance
