#include "io/onnx_wire.h"

#include <array>

namespace shapeprop::onnx_wire {

namespace {

using M = Message;

// (message, field number, the field's message type), from onnx-ml.proto of ONNX 1.21.0.
struct Edge {
  Message parent;
  uint8_t field;
  Message child;
};
constexpr Edge kEdges[] = {
    {M::Model, 7, M::Graph}, {M::Model, 8, M::OperatorSetId}, {M::Model, 14, M::StringStringEntry},
    {M::Model, 20, M::TrainingInfo}, {M::Model, 25, M::Function}, {M::Model, 26, M::DeviceConfiguration},
    {M::Graph, 1, M::Node}, {M::Graph, 5, M::Tensor}, {M::Graph, 11, M::ValueInfo}, {M::Graph, 12, M::ValueInfo},
    {M::Graph, 13, M::ValueInfo}, {M::Graph, 14, M::TensorAnnotation}, {M::Graph, 15, M::SparseTensor},
    {M::Graph, 16, M::StringStringEntry},
    {M::Node, 5, M::Attribute}, {M::Node, 9, M::StringStringEntry}, {M::Node, 10, M::NodeDeviceConfiguration},
    {M::Attribute, 5, M::Tensor}, {M::Attribute, 6, M::Graph}, {M::Attribute, 10, M::Tensor},
    {M::Attribute, 11, M::Graph}, {M::Attribute, 14, M::Type}, {M::Attribute, 15, M::Type},
    {M::Attribute, 22, M::SparseTensor}, {M::Attribute, 23, M::SparseTensor},
    {M::Function, 7, M::Node}, {M::Function, 9, M::OperatorSetId}, {M::Function, 11, M::Attribute},
    {M::Function, 12, M::ValueInfo}, {M::Function, 14, M::StringStringEntry},
    {M::Tensor, 3, M::TensorSegment}, {M::Tensor, 13, M::StringStringEntry}, {M::Tensor, 16, M::StringStringEntry},
    {M::SparseTensor, 1, M::Tensor}, {M::SparseTensor, 2, M::Tensor},
    {M::ValueInfo, 2, M::Type}, {M::ValueInfo, 4, M::StringStringEntry},
    {M::Type, 1, M::TypeTensor}, {M::Type, 4, M::TypeSequence}, {M::Type, 5, M::TypeMap}, {M::Type, 7, M::TypeOpaque},
    {M::Type, 8, M::TypeSparseTensor}, {M::Type, 9, M::TypeOptional},
    {M::TypeTensor, 2, M::TensorShape}, {M::TypeSequence, 1, M::Type}, {M::TypeMap, 2, M::Type},
    {M::TypeOptional, 1, M::Type}, {M::TypeSparseTensor, 2, M::TensorShape},
    {M::TensorShape, 1, M::TensorShapeDimension},
    {M::TrainingInfo, 1, M::Graph}, {M::TrainingInfo, 2, M::Graph}, {M::TrainingInfo, 3, M::StringStringEntry},
    {M::TrainingInfo, 4, M::StringStringEntry},
    {M::TensorAnnotation, 2, M::StringStringEntry},
    {M::NodeDeviceConfiguration, 2, M::ShardingSpec},
    {M::ShardingSpec, 3, M::IntIntListEntry}, {M::ShardingSpec, 4, M::ShardedDim},
    {M::ShardedDim, 2, M::SimpleShardedDim},
};

constexpr std::string_view kNames[] = {
    "", "onnx.ModelProto", "onnx.GraphProto", "onnx.NodeProto", "onnx.AttributeProto", "onnx.FunctionProto",
    "onnx.TensorProto", "onnx.TensorProto.Segment", "onnx.SparseTensorProto", "onnx.ValueInfoProto",
    "onnx.TypeProto", "onnx.TypeProto.Tensor", "onnx.TypeProto.Sequence", "onnx.TypeProto.Map",
    "onnx.TypeProto.Optional", "onnx.TypeProto.SparseTensor", "onnx.TypeProto.Opaque", "onnx.TensorShapeProto",
    "onnx.TensorShapeProto.Dimension", "onnx.StringStringEntryProto", "onnx.OperatorSetIdProto",
    "onnx.TrainingInfoProto", "onnx.TensorAnnotation", "onnx.DeviceConfigurationProto",
    "onnx.NodeDeviceConfigurationProto", "onnx.ShardingSpecProto", "onnx.ShardedDimProto",
    "onnx.SimpleShardedDimProto", "onnx.IntIntListEntryProto",
};
static_assert(std::size(kNames) == kMessageCount + 1u);

// The edges as a table indexed by message and field number, for the scan's inner loop.
constexpr size_t kMaxField = 26;
using Table = std::array<std::array<Message, kMaxField + 1>, kMessageCount + 1>;
constexpr Table make_table() {
  Table t{};
  for (const Edge& e : kEdges) t[static_cast<uint8_t>(e.parent)][e.field] = e.child;
  return t;
}
constexpr Table kTable = make_table();

}  // namespace

Message field_message(Message m, uint64_t field) {
  return field <= kMaxField ? kTable[static_cast<uint8_t>(m)][field] : Message::None;
}

std::string_view message_name(Message m) { return kNames[static_cast<uint8_t>(m)]; }

}  // namespace shapeprop::onnx_wire
