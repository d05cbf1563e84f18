// ONNX's protobuf messages as the wire format nests them: for each message, which of its
// fields hold a message and of which type. The depth scan of binary models
// (syntax_depth.cc) follows these; protobuf-lite, which Debian's ONNX is built with, has
// no descriptors to ask. The table is onnx-ml.proto of ONNX 1.21.0, which holds the
// messages of every older ONNX; onnx_wire_test.cc checks it against the descriptors of
// the linked ONNX where full protobuf has them.
#pragma once

#include <cstdint>
#include <string_view>

namespace shapeprop::onnx_wire {

enum class Message : uint8_t {
  None,  // not a message field (or not one of ONNX's messages)
  Model, Graph, Node, Attribute, Function, Tensor, TensorSegment, SparseTensor, ValueInfo,
  Type, TypeTensor, TypeSequence, TypeMap, TypeOptional, TypeSparseTensor, TypeOpaque,
  TensorShape, TensorShapeDimension, StringStringEntry, OperatorSetId, TrainingInfo,
  TensorAnnotation, DeviceConfiguration, NodeDeviceConfiguration, ShardingSpec, ShardedDim,
  SimpleShardedDim, IntIntListEntry,
};

// The type of the message in field `field` of `m`; None when that field holds no message.
Message field_message(Message m, uint64_t field);

// Its protobuf name ("onnx.GraphProto", "onnx.TypeProto.Tensor"), for tests and messages.
std::string_view message_name(Message m);

// Every message above but None, in order.
inline constexpr uint8_t kMessageCount = static_cast<uint8_t>(Message::IntIntListEntry);

}  // namespace shapeprop::onnx_wire
