// Classifies an inferred type against a declared (expected) one.
//
// Rules, applied recursively through sequence, optional and map types:
// - agree: nothing differs. A dim without a value (symbolic dim_param or unknown) agrees
//   with any other dim without a value: symbol names are arbitrary per tool, and a symbol
//   only carries information through equality with other symbols, which a comparison of
//   one type cannot see. (Node tests rarely declare symbols; ONNX names its unknown dims
//   unk__N.)
// - disagree: both sides know a fact and the facts differ: element types, type kinds
//   (tensor vs sequence, ...), ranks, or two dim_values.
// - less precise: the inferred side lacks a fact the declared side has: no type, element
//   type undefined, no shape, or no value for a dim.
// - more precise: the converse of less precise.
// When facts differ in several ways the most severe verdict wins, in the order
// error > disagree > less precise > more precise > agree. `error` means the comparison
// could not be made: the engine failed or the model was unreadable (the caller's to
// report), or the engine changed the graph's outputs (classify_outputs).
#pragma once

#include <string>
#include <string_view>

#include "onnx/onnx_pb.h"

namespace shapeprop::conformance {

// In increasing severity, so that combining verdicts is std::max.
enum class Verdict { agree, more_precise, less_precise, disagree, error };

inline constexpr int kVerdictCount = 5;

// "agree", "more precise", "less precise", "disagree", "error".
std::string_view to_string(Verdict verdict);

Verdict classify(const onnx::TypeProto& declared, const onnx::TypeProto& inferred);

// A verdict and, unless it is agree, what caused it.
struct Classification {
  Verdict verdict = Verdict::agree;
  std::string detail;
};

// Classifies each inferred graph output against the declared output at the same index;
// the most severe verdict wins and its detail names the first output that reached it,
// e.g. "output 'y': declared float[3,4], inferred float[3,?]".
Classification classify_outputs(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& declared,
                                const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& inferred);

// "output 'y': declared float[3,4], inferred float[3,?]".
std::string describe_output(const onnx::ValueInfoProto& declared, const onnx::ValueInfoProto& inferred);

// A type in ONNX's text syntax: "float[3,N,?]", "float" for a scalar, "float[]" for
// unknown rank, "seq(int64[2])"; "(none)" when there is no type at all.
std::string describe(const onnx::TypeProto& type);

}  // namespace shapeprop::conformance
