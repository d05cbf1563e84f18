#include "model_gen.h"

#include <vector>

#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"

namespace shapeprop::fuzz {

namespace {

constexpr int kMaxFunctions = 6;
constexpr int kMaxStatements = 8;
constexpr int kMaxSubgraphDepth = 3;

// One body being written: a graph, a subgraph or a function body.
struct Body {
  std::string text;
  std::vector<std::string> values;  // float tensors defined so far, usable as inputs
  int depth = 0;                    // subgraph level
  int function = -1;                // the function this body belongs to; -1: the main graph
};

class Generator {
 public:
  Generator(ByteReader& in, bool current_onnx) : in_(in), current_(current_onnx) {}

  GeneratedModel model() {
    GeneratedModel out;
    if (current_) {
      out.ir_version = in_.pick<int64_t>({10, 11, 12, 13});
      out.opset = in_.pick<int64_t>({18, 21, 22, 23, 24, 25, 26});
    }
    functions_ = static_cast<int>(in_.number(0, kMaxFunctions));
    Body main;
    std::string inputs;
    const int n = static_cast<int>(in_.number(1, 3));
    for (int i = 0; i < n; ++i) {
      const std::string x = "x" + std::to_string(i);
      // Element types since IR 9 (float8, IR 9; int4, 10; float4e2m1, 11; float8e8m0, 12;
      // int2 and uint2, 13), made float at once: the statements compute on floats.
      const std::string type =
          current_ && in_.flag()
              ? in_.pick<std::string>({"float8e4m3fn", "int4", "float4e2m1", "float8e8m0", "int2", "uint2"})
              : "float";
      out.element_types.push_back(type);
      inputs += (i ? ", " : "") + type + shape() + " " + x;
      if (type == "float") {
        main.values.push_back(x);
      } else {
        const std::string f = name("f");
        emit(main, f + " = Cast <to: int = 1> (" + x + ")");
        main.values.push_back(f);
      }
    }
    statements(main, /*first_callee=*/0);
    out.text = "<ir_version: " + std::to_string(out.ir_version) + ", opset_import: [\"\" : " + std::to_string(out.opset) +
               ", \"local\" : 1]>\ng (" + inputs + ") => (" + main.values.back() + ") {\n" + main.text + "}\n";
    for (int f = 0; f < functions_; ++f) out.text += function(f, out.opset);
    return out;
  }

 private:
  ByteReader& in_;
  const bool current_;
  int functions_ = 0;
  int fresh_ = 0;

  std::string name(const char* stem = "v") { return stem + std::to_string(fresh_++); }

  std::string shape() {
    const int rank = static_cast<int>(in_.number(0, 4));
    if (rank == 0) return "";  // a scalar ("float[]" would leave the rank unknown)
    std::string s = "[";
    for (int i = 0; i < rank; ++i) s += (i ? "," : "") + std::string(in_.pick({"1", "2", "3", "N", "M"}));
    return s + "]";
  }

  std::string any(const Body& b) { return b.values[in_.index(b.values.size())]; }

  void emit(Body& b, const std::string& line) { b.text += std::string(2 + 2 * b.depth, ' ') + line + "\n"; }

  std::string constant_ints(Body& b, const std::vector<int64_t>& values, bool scalar = false) {
    const std::string c = name("c");
    std::string list;
    for (size_t i = 0; i < values.size(); ++i) list += (i ? "," : "") + std::to_string(values[i]);
    const std::string type = scalar ? "int64" : "int64[" + std::to_string(values.size()) + "]";
    emit(b, c + " = Constant <value: tensor = " + type + " {" + list + "}> ()");
    return c;
  }

  // A subgraph with no inputs that computes one value from the outer scope.
  std::string branch(const Body& outer, const char* stem, int first_callee) {
    Body sub;
    sub.values = outer.values;
    sub.depth = outer.depth + 1;
    sub.function = outer.function;
    statements(sub, first_callee);
    const std::string g = name(stem);
    return g + " () => (" + sub.values.back() + ") {\n" + sub.text + "}";
  }

  void statements(Body& b, int first_callee) {
    const int n = static_cast<int>(in_.number(1, kMaxStatements));
    for (int i = 0; i < n && !in_.empty(); ++i) statement(b, first_callee);
    if (b.text.empty()) statement(b, first_callee);
  }

  void statement(Body& b, int first_callee) {
    const std::string x = any(b), y = any(b), out = name();
    const bool nest = b.depth < kMaxSubgraphDepth;
    int64_t kind = in_.number(0, current_ ? 15 : 14);
    if (kind == 14 && !current_) kind = 15;  // the ops new in opsets 23 to 26 are current ONNX's alone
    switch (kind) {
      case 0:
        emit(b, out + " = " + in_.pick<std::string>({"Abs", "Neg", "Relu", "Sigmoid", "Identity"}) + " (" + x + ")");
        break;
      case 1:
        emit(b, out + " = " + in_.pick<std::string>({"Add", "Mul", "Sub", "Max"}) + " (" + x + ", " + y + ")");
        break;
      case 2: {  // a rank conditional, as torchlib writes them
        if (!nest) return statement(b, first_callee);
        const std::string s = name("s"), r = name("r"), c = name("cond");
        emit(b, s + " = Shape (" + x + ")");
        emit(b, r + " = Size (" + s + ")");
        const std::string k = constant_ints(b, {in_.number(0, 4)}, /*scalar=*/true);
        emit(b, c + " = " + in_.pick<std::string>({"Equal", "Greater", "Less"}) + " (" + r + ", " + k + ")");
        const std::string then_g = branch(b, "then", first_callee), else_g = branch(b, "else", first_callee);
        emit(b, out + " = If (" + c + ") <then_branch: graph = " + then_g + ", else_branch: graph = " + else_g + ">");
        break;
      }
      case 3: {  // CastLike back from another type
        const std::string i = name("i");
        emit(b, i + " = Cast <to: int = " + std::to_string(in_.pick({7, 6, 10, 11})) + "> (" + x + ")");
        emit(b, out + " = CastLike (" + i + ", " + y + ")");
        break;
      }
      case 4: {
        std::string target;
        if (in_.flag()) {
          target = name("s");
          emit(b, target + " = Shape (" + y + ")");
        } else {
          target = constant_ints(b, in_.pick<std::vector<int64_t>>({{-1}, {0, -1}, {1, -1}, {2, -1}, {-1, 2}, {0, 0, -1}}));
        }
        emit(b, out + " = Reshape (" + x + ", " + target + ")");
        break;
      }
      case 5: {
        const std::string s = name("s");
        emit(b, s + " = Shape (" + y + ")");
        emit(b, out + " = Expand (" + x + ", " + s + ")");
        break;
      }
      case 6:
        if (b.function >= 0 && in_.flag())
          emit(b, out + " = Transpose <perm: ints = @perm> (" + x + ")");
        else
          emit(b, out + " = Transpose (" + x + ")");
        break;
      case 7: {  // a call of a later function: the call graph stays acyclic
        if (first_callee >= functions_) return statement(b, first_callee);
        const int f = static_cast<int>(in_.number(first_callee, functions_ - 1));
        std::string attrs;
        if (in_.flag()) attrs += "alpha: float = 0.25";
        if (in_.flag()) attrs += std::string(attrs.empty() ? "" : ", ") + "perm: ints = [" + in_.pick<std::string>({"0", "1,0", "0,1", "2,1,0"}) + "]";
        emit(b, out + " = local.F" + std::to_string(f) + (attrs.empty() ? "" : " <" + attrs + ">") + " (" + x +
                    (in_.flag() ? ", " + y : "") + ")");
        break;
      }
      case 8: {
        const std::string axes = constant_ints(b, {in_.number(-1, 1)});
        emit(b, out + " = " + in_.pick<std::string>({"Unsqueeze", "Squeeze"}) + " (" + x + ", " + axes + ")");
        break;
      }
      case 9: {  // a Loop carrying one value
        if (!nest) return statement(b, first_callee);
        const std::string trips = constant_ints(b, {in_.number(0, 3)}, true), go = name("go"), body = name("loop");
        emit(b, go + " = Constant <value: tensor = bool {1}> ()");
        Body sub;
        sub.depth = b.depth + 1;
        sub.function = b.function;
        sub.values = b.values;
        // Subgraph inputs get fresh names: an outer scope's names may not be redefined.
        const std::string iter = name("iter"), cond_in = name("cond_in"), carried = name("carried");
        sub.values.push_back(carried);
        statement(sub, first_callee);
        const std::string cond_out = name("cond_out");
        emit(sub, cond_out + " = Identity (" + cond_in + ")");
        emit(b, out + " = Loop (" + trips + ", " + go + ", " + x + ") <body: graph = " + body + " (int64 " + iter + ", bool " +
                    cond_in + ", " + carried + ") => (" + cond_out + ", " + sub.values.back() + ") {\n" + sub.text + "}>");
        break;
      }
      case 10: {  // a Scan over axis 0, no state
        if (!nest) return statement(b, first_callee);
        const std::string slice = name("slice"), step = name("step");
        emit(b, out + " = Scan (" + x + ") <num_scan_inputs: int = 1, body: graph = " + name("scan") + " (" + slice +
                    ") => (" + step + ") {\n" + std::string(4 + 2 * b.depth, ' ') + step + " = " +
                    in_.pick<std::string>({"Abs", "Neg", "Identity"}) + " (" + slice + ")\n}>");
        break;
      }
      case 11: {  // a dim of x as a value, into a new shape
        const std::string s = name("s"), d = name("d"), u = name("u"), t = name("t");
        emit(b, s + " = Shape (" + x + ")");
        const std::string index = constant_ints(b, {in_.number(-2, 1)}, true), zero = constant_ints(b, {0});
        emit(b, d + " = Gather <axis: int = 0> (" + s + ", " + index + ")");
        emit(b, u + " = Unsqueeze (" + d + ", " + zero + ")");
        const std::string rest = constant_ints(b, {-1});
        emit(b, t + " = Concat <axis: int = 0> (" + u + ", " + rest + ")");
        emit(b, out + " = Reshape (" + y + ", " + t + ")");
        break;
      }
      case 12:
        if (b.function >= 0)
          emit(b, out + " = LeakyRelu <alpha: float = @alpha> (" + x + ")");
        else
          emit(b, out + " = LeakyRelu <alpha: float = 0.5> (" + x + ")");
        break;
      case 14: {  // the ops new in opsets 23 to 26 (at an older opset: ops no schema knows)
        const std::string axis = constant_ints(b, {in_.number(-1, 1)}, true);
        emit(b, out + " = " +
                    in_.pick<std::string>({"RMSNormalization <axis: int = 0> (" + x + ", " + x + ")",
                                           "Attention (" + x + ", " + y + ", " + y + ")",
                                           "RotaryEmbedding (" + x + ", " + y + ", " + y + ")", "Swish (" + x + ")",
                                           "TensorScatter <axis: int = " + std::to_string(in_.number(-2, 2)) + "> (" + x +
                                               ", " + y + ")",
                                           "CumProd <reverse: int = " + std::to_string(in_.number(0, 1)) + "> (" + x +
                                               ", " + axis + ")",
                                           "BitCast <to: int = " + in_.pick<std::string>({"6", "10", "1", "12"}) + "> (" +
                                               x + ")"}));
        break;
      }
      case 15: {  // a split into a sequence and back, of x concatenated with itself (a dim 2*N, 2*M...)
        const std::string c = name("c"), seq = name("seq");
        emit(b, c + " = Concat <axis: int = 0> (" + x + ", " + x + ")");
        if (in_.flag())  // pieces of 2 (the last one smaller)
          emit(b, seq + " = SplitToSequence <axis: int = 0> (" + c + ", " + constant_ints(b, {2}, true) + ")");
        else  // pieces of 1, with the split axis kept or not
          emit(b, seq + " = SplitToSequence <axis: int = 0, keepdims: int = " + std::to_string(in_.number(0, 1)) + "> (" +
                      c + ")");
        if (in_.flag())
          emit(b, out + " = ConcatFromSequence <axis: int = " + std::to_string(in_.number(-1, 0)) + "> (" + seq + ")");
        else
          emit(b, out + " = SequenceAt (" + seq + ", " + constant_ints(b, {in_.number(-1, 0)}, true) + ")");
        break;
      }
      case 13: {  // ConstantOfShape of a shape value, broadcast into x
        const std::string s = name("s"), z = name("z");
        emit(b, s + " = Shape (" + y + ")");
        emit(b, z + " = ConstantOfShape <value: tensor = float[1] {1}> (" + s + ")");
        emit(b, out + " = Add (" + x + ", " + z + ")");
        break;
      }
    }
    b.values.push_back(out);
  }

  std::string function(int f, int64_t opset) {
    Body body;
    body.function = f;
    body.values = {"a", "b"};
    statements(body, f + 1);
    const std::string header = in_.flag() ? "<alpha: float = 0.5, perm>" : "<alpha, perm: ints = [1, 0]>";
    return "\n<domain: \"local\", opset_import: [\"\" : " + std::to_string(opset) + ", \"local\" : 1]>\nF" +
           std::to_string(f) + " " + header + " (a, b) => (" + body.values.back() + ") {\n" + body.text + "}\n";
  }
};

}  // namespace

GeneratedModel generate(ByteReader& in, bool current_onnx) { return Generator(in, current_onnx).model(); }

bool readable_by_linked_onnx(const GeneratedModel& model) {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  if (model.ir_version > onnx::Version::IR_VERSION || model.opset > ranges.at("").second) return false;
  for (const auto& type : model.element_types)
    if (!onnx::PrimitiveTypeNameMap::IsTypeName(type)) return false;
  return true;
}

}  // namespace shapeprop::fuzz
