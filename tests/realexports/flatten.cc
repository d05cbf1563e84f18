// realexports-flatten IN.onnx OUT.onnx: the model with every call of a model-local
// function inlined by ONNX's inliner, keeping what each function's value_info declares,
// so that tools/equiv/ort_types.js can check the types written inside functions against
// the shapes ONNX Runtime computes (ONNX Runtime runs a function's values but never
// shows them).
//
// ONNX's inliner already moves a callee's value_info into the graph under the names it
// gives that call's values. Two things are added here, before it runs, by giving every
// call its own copy of the callee (nested calls too):
//   - a function's symbols hold per call, not across calls (one value_info serves every
//     call site), so each copy's dim_params get the suffix "@@N" (N numbers the call):
//     ort_types.js reads "sym@@N" as `sym` when that is an input's symbol or an
//     expression over them, and otherwise as a symbol of its own per call;
//   - each copied value_info gets the doc_string "FUNCTION: NAME (call NODE)", naming
//     where the value came from in the messages.
// Values inside subgraphs (If, Loop, Scan bodies) stay out of reach: ONNX Runtime cannot
// output them.
#include <onnx/inliner/inliner.h>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // domain, name, overload

class CallCopies {
 public:
  explicit CallCopies(onnx::ModelProto& model) : model_(model) {
    for (const auto& f : model.functions()) originals_[{f.domain(), f.name(), f.overload()}] = f;
  }

  void run() {
    nodes(*model_.mutable_graph()->mutable_node(), "graph");
    model_.clear_functions();
    for (auto& f : copies_) *model_.add_functions() = std::move(f);
  }

 private:
  // Retargets every call among `nodes` (and in their subgraphs) to a copy of its own.
  void nodes(google::protobuf::RepeatedPtrField<onnx::NodeProto>& list, const std::string& where) {
    for (auto& node : list) {
      auto it = originals_.find({node.domain(), node.op_type(), node.overload()});
      if (it == originals_.end()) {
        for (auto& a : *node.mutable_attribute()) {
          if (a.has_g()) nodes(*a.mutable_g()->mutable_node(), where);
          for (auto& g : *a.mutable_graphs()) nodes(*g.mutable_node(), where);
        }
        continue;
      }
      onnx::FunctionProto copy = it->second;
      const std::string id = "@@" + std::to_string(++calls_);
      const std::string op = node.domain().empty() ? node.op_type() : node.domain() + "." + node.op_type();
      const std::string call = where + " > " + (node.name().empty() ? op : node.name());
      for (auto& vi : *copy.mutable_value_info()) {
        vi.set_doc_string(copy.domain() + "::" + copy.name() + ": " + vi.name() + " (call " + call + ")");
        tag_dims(*vi.mutable_type(), id);
      }
      copy.set_name(copy.name() + id);
      node.set_op_type(copy.name());
      nodes(*copy.mutable_node(), call);
      copies_.push_back(std::move(copy));
    }
  }

  static void tag_dims(onnx::TypeProto& type, const std::string& id) {
    if (type.has_tensor_type() && type.tensor_type().has_shape()) {
      for (auto& d : *type.mutable_tensor_type()->mutable_shape()->mutable_dim())
        if (d.has_dim_param()) d.set_dim_param(d.dim_param() + id);
    }
    if (type.has_sequence_type()) tag_dims(*type.mutable_sequence_type()->mutable_elem_type(), id);
    if (type.has_optional_type()) tag_dims(*type.mutable_optional_type()->mutable_elem_type(), id);
  }

  onnx::ModelProto& model_;
  std::map<Key, onnx::FunctionProto> originals_;
  std::vector<onnx::FunctionProto> copies_;
  int calls_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN.onnx OUT.onnx\n", argv[0]);
    return 2;
  }
  onnx::ModelProto model;
  {
    std::ifstream in(argv[1], std::ios::binary);
    if (!in || !model.ParseFromIstream(&in)) {
      std::fprintf(stderr, "realexports-flatten: cannot read the model %s\n", argv[1]);
      return 2;
    }
  }
  try {
    CallCopies(model).run();
    onnx::inliner::InlineLocalFunctions(model, /*convert_version=*/true);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "realexports-flatten: %s: ONNX's inliner failed: %s\n", argv[1], e.what());
    return 1;
  }
  const std::string tmp = std::string(argv[2]) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !model.SerializeToOstream(&out)) {
      std::fprintf(stderr, "realexports-flatten: cannot write %s\n", tmp.c_str());
      return 2;
    }
  }
  if (std::rename(tmp.c_str(), argv[2]) != 0) {
    std::fprintf(stderr, "realexports-flatten: cannot rename %s to %s\n", tmp.c_str(), argv[2]);
    return 2;
  }
  return 0;
}
