'use strict';
// A tiny protobuf encoder that writes binary ONNX models for the equivalence tests, so
// that no binary fixtures live in the repository. It covers exactly the onnx.proto
// fields the tests use (see the field numbers below).

// ---------------------------------------------------------------------------------------
// Wire format.

// int64 fields: negative numbers are written as 10-byte two's complement.
const { varintBytes } = require('../../tools/equiv/onnx_proto');

const key = (field, wire) => varintBytes((field << 3) | wire);

const pb = {
  varint: (field, value) => Buffer.concat([key(field, 0), varintBytes(value)]),
  bytes: (field, buf) => Buffer.concat([key(field, 2), varintBytes(buf.length), buf]),
  string: (field, s) => pb.bytes(field, Buffer.from(s, 'utf8')),
  message: (field, parts) => pb.bytes(field, Buffer.concat(parts)),
  packedVarints: (field, values) => pb.bytes(field, Buffer.concat(values.map(varintBytes))),
  packedFloats: (field, values) => {
    const b = Buffer.alloc(4 * values.length);
    values.forEach((v, i) => b.writeFloatLE(v, 4 * i));
    return pb.bytes(field, b);
  },
  fixed32: (field, u32) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(u32 >>> 0);
    return Buffer.concat([key(field, 5), b]);
  },
  fixed64: (field) => Buffer.concat([key(field, 1), Buffer.alloc(8)]),
  float: (field, value) => {
    const b = Buffer.alloc(4);
    b.writeFloatLE(value);
    return Buffer.concat([key(field, 5), b]);
  },
  // A proto2 group (wire types 3/4), which ONNX never uses; the decoder must skip it.
  group: (field, parts) => Buffer.concat([key(field, 3), ...parts, key(field, 4)]),
};

// ---------------------------------------------------------------------------------------
// onnx.proto.

const DT = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  UINT16: 4,
  INT16: 5,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  UINT32: 12,
  UINT64: 13,
  BFLOAT16: 16,
};

// TypeProto{tensor_type=1: {elem_type=1, shape=2: {dim=1: {dim_value=1 | dim_param=2}}}}.
// `dims`: array of number (static), string (symbolic) or null (unknown); or null for
// "no shape at all" (unknown rank).
function tensorType(elemType, dims) {
  const parts = [pb.varint(1, elemType)];
  if (dims) {
    const dimMsgs = dims.map((d) => {
      if (typeof d === 'number') return pb.message(1, [pb.varint(1, d)]);
      if (typeof d === 'string') return pb.message(1, [pb.string(2, d)]);
      return pb.message(1, []);
    });
    parts.push(pb.message(2, dimMsgs));
  }
  return pb.message(1, parts);
}

// ValueInfoProto{name=1, type=2}.
function valueInfo(name, elemType, dims) {
  return Buffer.concat([pb.string(1, name), pb.bytes(2, tensorType(elemType, dims))]);
}

// TensorProto{dims=1, data_type=2, float_data=4 (packed), int64_data=7 (packed),
// name=8, raw_data=9}.
function tensor({ name, dataType, dims, floatData, int64Data, rawData }) {
  const parts = [];
  if (dims.length) parts.push(pb.packedVarints(1, dims));
  parts.push(pb.varint(2, dataType));
  if (floatData) parts.push(pb.packedFloats(4, floatData));
  if (int64Data) parts.push(pb.packedVarints(7, int64Data));
  if (name !== undefined) parts.push(pb.string(8, name));
  if (rawData) parts.push(pb.bytes(9, rawData));
  return Buffer.concat(parts);
}

// AttributeProto{name=1, f=2, i=3, t=5, type=20}; the value's JS shape picks the kind.
const ATTR = { FLOAT: 1, INT: 2, TENSOR: 4 };
function attribute(name, value) {
  if (value && value.tensor) {
    return Buffer.concat([pb.string(1, name), pb.bytes(5, tensor(value.tensor)), pb.varint(20, ATTR.TENSOR)]);
  }
  if (value && value.float !== undefined) {
    return Buffer.concat([pb.string(1, name), pb.float(2, value.float), pb.varint(20, ATTR.FLOAT)]);
  }
  return Buffer.concat([pb.string(1, name), pb.varint(3, value), pb.varint(20, ATTR.INT)]);
}

// NodeProto{input=1, output=2, name=3, op_type=4, attribute=5}.
function node(opType, inputs, outputs, attributes = {}, name = undefined) {
  const parts = [
    ...inputs.map((s) => pb.string(1, s)),
    ...outputs.map((s) => pb.string(2, s)),
  ];
  if (name) parts.push(pb.string(3, name));
  parts.push(pb.string(4, opType));
  for (const [k, v] of Object.entries(attributes)) parts.push(pb.bytes(5, attribute(k, v)));
  return Buffer.concat(parts);
}

// ModelProto{ir_version=1, graph=7, opset_import=8: {domain=1, version=2}} with
// GraphProto{node=1, name=2, initializer=5, input=11, output=12}.
// inputs/outputs: [name, elemType, dims]; initializers: tensor() specs with a name.
function model({ nodes, inputs, outputs, initializers = [], opset = 17, irVersion = 8, name = 'g' }) {
  const graph = [
    ...nodes.map((n) => pb.bytes(1, n)),
    pb.string(2, name),
    ...initializers.map((t) => pb.bytes(5, tensor(t))),
    ...inputs.map(([n, t, d]) => pb.bytes(11, valueInfo(n, t, d))),
    ...outputs.map(([n, t, d]) => pb.bytes(12, valueInfo(n, t, d))),
  ];
  return Buffer.concat([
    pb.varint(1, irVersion),
    pb.message(7, graph),
    pb.message(8, [pb.string(1, ''), pb.varint(2, opset)]),
  ]);
}

// float16 raw_data for a TensorProto, from a list of half bit patterns.
function halfRaw(bits) {
  const b = Buffer.alloc(2 * bits.length);
  bits.forEach((h, i) => b.writeUInt16LE(h, 2 * i));
  return b;
}

module.exports = { pb, DT, tensorType, valueInfo, tensor, attribute, node, model, halfRaw, varintBytes };
