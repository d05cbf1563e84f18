// check::SymbolRenaming: how the schema registry memoises calls alike but for the names
// of their symbols.
#include <gtest/gtest.h>

#include "check/symbol_renaming.h"
#include "shapeprop/dim.h"

namespace shapeprop::check {
namespace {

onnx::TypeProto tensor(std::initializer_list<const char*> dims) {
  onnx::TypeProto t;
  t.mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = t.mutable_tensor_type()->mutable_shape();
  for (const char* d : dims) shape->add_dim()->set_dim_param(d);
  return t;
}

std::vector<std::string> dims_of(const onnx::TypeProto& t) {
  std::vector<std::string> out;
  for (const auto& d : t.tensor_type().shape().dim()) out.push_back(d.dim_param());
  return out;
}

TEST(SymbolRenaming, PlaceholdersFollowTheOrderOfNamesSoExpressionsStayCanonical) {
  SymbolRenaming r({"batch"});
  onnx::TypeProto t = tensor({"unk__12", "batch", "2*unk__12", "batch*unk__12+1"});
  r.collect(t);
  r.assign();
  r.rename(t);
  EXPECT_EQ(dims_of(t), (std::vector<std::string>{"sym__000001", "sym__000000", "2*sym__000001",
                                                  "sym__000000*sym__000001+1"}));
  // Still expressions, not opaque names: the analysis computes with them.
  EXPECT_FALSE(Dim::parse(t.tensor_type().shape().dim(3).dim_param()).is_symbol());
  EXPECT_EQ(Dim::parse(t.tensor_type().shape().dim(3).dim_param()).str(), "sym__000000*sym__000001+1");
  r.restore(t);
  EXPECT_EQ(dims_of(t), (std::vector<std::string>{"unk__12", "batch", "2*unk__12", "batch*unk__12+1"}));
  EXPECT_EQ(r.restore("float[sym__000001,3] vs float[sym__0000010]"), "float[unk__12,3] vs float[sym__0000010]");
}

TEST(SymbolRenaming, CallsAlikeButForMadeUpNamesRenameAlike) {
  auto renamed = [](const char* name) {
    SymbolRenaming r({});
    onnx::TypeProto t = tensor({name, "4"});
    r.collect(t);
    r.assign();
    r.rename(t);
    return t.SerializeAsString();
  };
  EXPECT_EQ(renamed("unk__12"), renamed("unk__40"));
}

TEST(SymbolRenaming, OpaqueNamesAreKeptAndPlaceholdersAvoidTheModelsNames) {
  SymbolRenaming r({"sym__000000", "batch size"});
  onnx::TypeProto t = tensor({"batch size", "N"});
  r.collect(t);
  r.assign();
  r.rename(t);
  EXPECT_EQ(dims_of(t), (std::vector<std::string>{"batch size", "sym___000000"}));
}

}  // namespace
}  // namespace shapeprop::check
