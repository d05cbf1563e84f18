// io/onnx_wire's table of ONNX's messages against the descriptors of the linked ONNX's
// generated code: every message field of every message reachable from ModelProto is in
// the table with its type, and the table names no field that the linked ONNX has with
// another type (it may know fields an older ONNX lacks). Protobuf-lite has no
// descriptors: there the table is what the depth scan has, and this test has nothing to
// compare it with.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "io/onnx_wire.h"
#include "onnx/onnx_pb.h"

#ifndef ONNX_USE_LITE_PROTO
#include <google/protobuf/descriptor.h>
#endif

namespace shapeprop {
namespace {

using onnx_wire::Message;

TEST(OnnxWire, NamesEveryMessageOnce) {
  std::map<std::string, int> seen;
  for (uint8_t m = 1; m <= onnx_wire::kMessageCount; ++m) ++seen[std::string(onnx_wire::message_name(Message{m}))];
  EXPECT_EQ(seen.size(), onnx_wire::kMessageCount);
  EXPECT_EQ(onnx_wire::field_message(Message::Model, 7), Message::Graph);
  EXPECT_EQ(onnx_wire::field_message(Message::Attribute, 11), Message::Graph);
  EXPECT_EQ(onnx_wire::field_message(Message::Node, 1), Message::None);  // a string
  EXPECT_EQ(onnx_wire::field_message(Message::Node, 1000), Message::None);
}

#ifndef ONNX_USE_LITE_PROTO
TEST(OnnxWire, AgreesWithTheLinkedOnnxsDescriptors) {
  std::map<std::string, Message> by_name;
  for (uint8_t m = 1; m <= onnx_wire::kMessageCount; ++m)
    by_name[std::string(onnx_wire::message_name(Message{m}))] = Message{m};
  std::vector<const google::protobuf::Descriptor*> todo = {onnx::ModelProto::descriptor()};
  std::map<std::string, bool> done;
  size_t fields = 0;
  while (!todo.empty()) {
    const auto* d = todo.back();
    todo.pop_back();
    if (done[d->full_name()]) continue;
    done[d->full_name()] = true;
    ASSERT_TRUE(by_name.count(d->full_name())) << d->full_name() << " is not in io/onnx_wire.cc";
    const Message m = by_name[d->full_name()];
    for (int i = 0; i < d->field_count(); ++i) {
      const auto* f = d->field(i);
      const Message in_table = onnx_wire::field_message(m, static_cast<uint64_t>(f->number()));
      if (f->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE ||
          f->type() == google::protobuf::FieldDescriptor::TYPE_GROUP) {
        ++fields;
        EXPECT_EQ(onnx_wire::message_name(in_table), f->message_type()->full_name()) << d->full_name() << "." << f->name();
        todo.push_back(f->message_type());
      } else {
        EXPECT_EQ(in_table, Message::None) << d->full_name() << "." << f->name() << " holds no message";
      }
    }
  }
  EXPECT_GE(fields, 40u);
}
#endif

}  // namespace
}  // namespace shapeprop
