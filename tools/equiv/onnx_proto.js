'use strict';
// Minimal protobuf wire-format decoder for the part of onnx.proto that the oracles need:
// the graph's input/output signatures and the initializer names (a graph input that has
// an initializer is optional and is not fed), value_info and node outputs; types with what
// they nest (sequence, optional and map elements) and a walk over every typed value of a
// model (subgraphs and functions included: forEachTypedValue); and the two encoding
// helpers that writing a message needs.
//
// Deliberately not a general protobuf library: it knows a handful of field numbers and
// skips everything else, so it keeps working on models written by newer ONNX versions.
// It throws an Error (message says what and where) on malformed or truncated data.

// ONNX TensorProto.DataType -> ONNX Runtime (JS) tensor type name. `null` marks types
// that exist in ONNX but that onnxruntime-node cannot feed from JS.
const ELEM_TYPES = {
  0: 'undefined',
  1: 'float32',
  2: 'uint8',
  3: 'int8',
  4: 'uint16',
  5: 'int16',
  6: 'int32',
  7: 'int64',
  8: 'string',
  9: 'bool',
  10: 'float16',
  11: 'float64',
  12: 'uint32',
  13: 'uint64',
  14: 'complex64',
  15: 'complex128',
  16: 'bfloat16',
  17: 'float8e4m3fn',
  18: 'float8e4m3fnuz',
  19: 'float8e5m2',
  20: 'float8e5m2fnuz',
  21: 'uint4',
  22: 'int4',
  23: 'float4e2m1',
  24: 'float8e8m0',
  25: 'uint2',
  26: 'int2',
};

// Wire types (https://protobuf.dev/programming-guides/encoding/).
const VARINT = 0;
const FIXED64 = 1;
const LEN = 2;
const SGROUP = 3;
const EGROUP = 4;
const FIXED32 = 5;

class Reader {
  constructor(buf, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }

  done() {
    return this.pos >= this.end;
  }

  // Varints are decoded as BigInt: int64 fields (dim_value, ir_version) can use all
  // 64 bits, and negative int64 values take 10 bytes.
  varint() {
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) throw new Error(`truncated varint at byte ${this.pos}`);
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return BigInt.asUintN(64, result);
      shift += 7n;
    }
    throw new Error(`varint longer than 10 bytes at byte ${this.pos}`);
  }

  // Returns [fieldNumber, wireType], or throws on a malformed key.
  key() {
    const k = this.varint();
    const field = Number(k >> 3n);
    const wire = Number(k & 7n);
    if (field === 0) throw new Error(`invalid field number 0 at byte ${this.pos}`);
    return [field, wire];
  }

  // A length-delimited payload as [start, end) into `buf`.
  bytes() {
    const len = this.varint();
    const start = this.pos;
    if (len > BigInt(this.end - start)) {
      throw new Error(`length ${len} at byte ${start} runs past the end of its message`);
    }
    this.pos = start + Number(len);
    return [start, this.pos];
  }

  // Skips a value of the given wire type whose key has just been read. A start-group
  // skips everything up to its matching end-group (groups nest).
  skip(field, wire) {
    switch (wire) {
      case VARINT:
        this.varint();
        return;
      case FIXED64:
        this.advance(8);
        return;
      case FIXED32:
        this.advance(4);
        return;
      case LEN:
        this.bytes();
        return;
      case SGROUP:
        for (;;) {
          if (this.done()) throw new Error(`unterminated group (field ${field})`);
          const [f, w] = this.key();
          if (w === EGROUP) {
            if (f !== field) throw new Error(`group ${field} closed by end-group ${f}`);
            return;
          }
          this.skip(f, w);
        }
      case EGROUP:
        throw new Error(`unexpected end-group (field ${field}) at byte ${this.pos}`);
      default:
        throw new Error(`unknown wire type ${wire} (field ${field}) at byte ${this.pos}`);
    }
  }

  advance(n) {
    if (this.pos + n > this.end) throw new Error(`truncated fixed-width value at byte ${this.pos}`);
    this.pos += n;
  }
}

// Calls handler(field, wire, reader) for each field of the message in buf[start, end).
// The handler must consume the value (reader.varint()/bytes()/...) and return true, or
// return false to have it skipped.
function forEachField(buf, start, end, handler) {
  const r = new Reader(buf, start, end);
  while (!r.done()) {
    const [field, wire] = r.key();
    if (wire === EGROUP) throw new Error(`unexpected end-group (field ${field}) at byte ${r.pos}`);
    if (!handler(field, wire, r)) r.skip(field, wire);
  }
}

const textDecoder = new TextDecoder('utf-8');
function str(buf, [start, end]) {
  return textDecoder.decode(buf.subarray(start, end));
}

// A repeated integer field arrives either one varint per key (unpacked, wire type 0) or
// as one length-delimited run of varints (packed, wire type 2); parsers must accept both.
function readRepeatedVarint(wire, r, out) {
  if (wire === VARINT) {
    out.push(r.varint());
  } else if (wire === LEN) {
    const [s, e] = r.bytes();
    const inner = new Reader(r.buf, s, e);
    while (!inner.done()) out.push(inner.varint());
  } else {
    return false;
  }
  return true;
}

// int64 as a JS number (exact for anything a tensor dimension can be).
function toInt64Number(u) {
  return Number(BigInt.asIntN(64, u));
}

// TensorShapeProto.Dimension: {value: number} | {param: string} | {} (unknown).
function decodeDim(buf, start, end) {
  const dim = {};
  forEachField(buf, start, end, (f, w, r) => {
    if (f === 1 && w === VARINT) dim.value = toInt64Number(r.varint());
    else if (f === 2 && w === LEN) dim.param = str(buf, r.bytes());
    else return false;
    return true;
  });
  return dim;
}

function decodeShape(buf, start, end) {
  const dims = [];
  forEachField(buf, start, end, (f, w, r) => {
    if (f !== 1 || w !== LEN) return false;
    const [s, e] = r.bytes();
    dims.push(decodeDim(buf, s, e));
    return true;
  });
  return dims;
}

// An element type's name: ELEM_TYPES's, or "elem_type N" for one it does not know.
function dtypeName(elemType) {
  return ELEM_TYPES[elemType] || `elem_type ${elemType}`;
}

// The messages of TypeProto that hold an element type (int32, field 1) and a message
// (field 2): Tensor and SparseTensor (elem_type, shape), Map (key_type, value_type).
// Sets t[number] and t[name] to the type's number and name, t[second] to what
// `decodeSecond` makes of the message; returns t.
function decodeTypeAndMessage(buf, start, end, t, [number, name, second], decodeSecond) {
  forEachField(buf, start, end, (f, w, r) => {
    if (f === 1 && w === VARINT) {
      t[number] = Number(r.varint());
      t[name] = dtypeName(t[number]);
    } else if (f === 2 && w === LEN) {
      t[second] = decodeSecond(buf, ...r.bytes());
    } else {
      return false;
    }
    return true;
  });
  return t;
}

// TypeProto -> one of
//   {kind: 'tensor' | 'sparse_tensor', elemType, dtype, shape}  (shape null: rank unknown)
//   {kind: 'sequence' | 'optional', elem}   (elem: the element's type, null when absent)
//   {kind: 'map', keyType, keyDtype, value} (value: the value's type, null when absent)
//   {kind: 'none'}                          (no kind set)
// TypeProto fields: tensor_type 1, sequence_type 4, map_type 5, sparse_tensor_type 8,
// optional_type 9; Sequence and Optional hold elem_type 1, Map key_type 1 and value_type 2.
function decodeType(buf, start, end) {
  let type = { kind: 'none' };
  const nested = (s, e, kind) => {
    const t = { kind, elem: null };
    forEachField(buf, s, e, (f, w, r) => {
      if (f !== 1 || w !== LEN) return false;
      t.elem = decodeType(buf, ...r.bytes());
      return true;
    });
    return t;
  };
  const tensor = (s, e, kind) =>
    decodeTypeAndMessage(buf, s, e, { kind, elemType: 0, dtype: ELEM_TYPES[0], shape: null }, ['elemType', 'dtype', 'shape'], decodeShape);
  const map = (s, e) =>
    decodeTypeAndMessage(buf, s, e, { kind: 'map', keyType: 0, keyDtype: ELEM_TYPES[0], value: null }, ['keyType', 'keyDtype', 'value'], decodeType);
  forEachField(buf, start, end, (f, w, r) => {
    if (w !== LEN) return false;
    if (f === 1) type = tensor(...r.bytes(), 'tensor');
    else if (f === 8) type = tensor(...r.bytes(), 'sparse_tensor');
    else if (f === 4) type = nested(...r.bytes(), 'sequence');
    else if (f === 9) type = nested(...r.bytes(), 'optional');
    else if (f === 5) type = map(...r.bytes());
    else return false;
    return true;
  });
  return type;
}

// The dims of a type, nested ones included: [{dim, path}] where path says where the dim
// sits ('dim 1', 'elem: dim 0' for a sequence's or an optional's element, 'value: ...'
// for a map's value).
function dimsOfType(type, prefix = '') {
  if (!type) return [];
  if (type.kind === 'tensor' || type.kind === 'sparse_tensor') {
    return (type.shape || []).map((dim, i) => ({ dim, path: `${prefix}dim ${i}` }));
  }
  if (type.kind === 'sequence' || type.kind === 'optional') return dimsOfType(type.elem, `${prefix}elem: `);
  if (type.kind === 'map') return dimsOfType(type.value, `${prefix}value: `);
  return [];
}

function decodeValueInfo(buf, start, end) {
  const vi = { name: '', type: { kind: 'none' } };
  forEachField(buf, start, end, (f, w, r) => {
    if (w !== LEN) return false;
    if (f === 1) vi.name = str(buf, r.bytes());
    else if (f === 2) vi.type = decodeType(buf, ...r.bytes());
    else if (f === 3) vi.doc = str(buf, r.bytes());
    else return false;
    return true;
  });
  return vi;
}

// TensorProto: only what identifies it (name, data_type, dims); data is skipped.
function decodeTensorHeader(buf, start, end) {
  const t = { name: '', elemType: 0, dtype: ELEM_TYPES[0], dims: [] };
  const dims = [];
  forEachField(buf, start, end, (f, w, r) => {
    if (f === 1) return readRepeatedVarint(w, r, dims);
    if (f === 2 && w === VARINT) {
      t.elemType = Number(r.varint());
      t.dtype = dtypeName(t.elemType);
      return true;
    }
    if (f === 8 && w === LEN) {
      t.name = str(buf, r.bytes());
      return true;
    }
    return false;
  });
  t.dims = dims.map(toInt64Number);
  return t;
}

// NodeProto: the names of its outputs (field 2).
function decodeNodeOutputs(buf, start, end) {
  const outputs = [];
  forEachField(buf, start, end, (f, w, r) => {
    if (f !== 2 || w !== LEN) return false;
    outputs.push(str(buf, r.bytes()));
    return true;
  });
  return outputs;
}

// value_info entries keep their bytes (`raw`), so that a caller can re-emit them as
// graph outputs (ort_types.js does).
function decodeGraph(buf, start, end) {
  const g = { name: '', inputs: [], outputs: [], initializers: [], valueInfo: [], nodeOutputs: [] };
  forEachField(buf, start, end, (f, w, r) => {
    if (w !== LEN) return false;
    if (f === 1) g.nodeOutputs.push(...decodeNodeOutputs(buf, ...r.bytes()));
    else if (f === 2) g.name = str(buf, r.bytes());
    else if (f === 5) g.initializers.push(decodeTensorHeader(buf, ...r.bytes()));
    else if (f === 11) g.inputs.push(decodeValueInfo(buf, ...r.bytes()));
    else if (f === 12) g.outputs.push(decodeValueInfo(buf, ...r.bytes()));
    else if (f === 13) {
      const range = r.bytes();
      g.valueInfo.push({ ...decodeValueInfo(buf, ...range), raw: buf.subarray(...range) });
    } else return false;
    return true;
  });
  return g;
}

function decodeOpsetId(buf, start, end) {
  const op = { domain: '', version: 0 };
  forEachField(buf, start, end, (f, w, r) => {
    if (f === 1 && w === LEN) op.domain = str(buf, r.bytes());
    else if (f === 2 && w === VARINT) op.version = toInt64Number(r.varint());
    else return false;
    return true;
  });
  return op;
}

// Decodes a serialized ModelProto (Uint8Array/Buffer). Result:
//   {irVersion, opsetImports: [{domain, version}], graph: {name, inputs, outputs,
//    initializers, valueInfo, nodeOutputs}, feedInputs}
// where inputs/outputs are {name, type} and feedInputs are the inputs without an
// initializer (the ones a caller must supply). Throws if there is no graph.
function decodeModel(buf) {
  const model = { irVersion: 0, opsetImports: [], graph: null, metadata: {} };
  forEachField(buf, 0, buf.length, (f, w, r) => {
    if (f === 1 && w === VARINT) model.irVersion = toInt64Number(r.varint());
    else if (f === 7 && w === LEN) {
      // A message field met twice is merged, as protobuf does: repeated fields append.
      const g = decodeGraph(buf, ...r.bytes());
      if (!model.graph) model.graph = g;
      else for (const [k, v] of Object.entries(g)) model.graph[k] = Array.isArray(v) ? model.graph[k].concat(v) : v || model.graph[k];
    }
    else if (f === 8 && w === LEN) model.opsetImports.push(decodeOpsetId(buf, ...r.bytes()));
    else if (f === 14 && w === LEN) {
      const e = scanMessage(buf, ...r.bytes(), { 1: 'key', 2: 'value' });
      if (e.key !== undefined) model.metadata[e.key] = e.value || '';
    }
    else return false;
    return true;
  });
  if (!model.graph) throw new Error('not an ONNX model: no graph (ModelProto field 7)');
  const initialized = new Set(model.graph.initializers.map((t) => t.name));
  model.feedInputs = model.graph.inputs.filter((vi) => !initialized.has(vi.name));
  return model;
}

// ---------------------------------------------------------------------------------------
// Every typed value of a model, wherever it is declared.

// The string fields `wanted` ({fieldNumber: key}) of the message in buf[start, end), and
// where each length-delimited field in `ranges` ({fieldNumber: key}) is, in order:
// {key: text, ..., spans: [{key, range: [start, end)}]}.
function scanMessage(buf, start, end, wanted, ranges = {}) {
  const out = { spans: [] };
  forEachField(buf, start, end, (f, w, r) => {
    if (w !== LEN) return false;
    if (wanted[f] !== undefined) out[wanted[f]] = str(buf, r.bytes());
    else if (ranges[f] !== undefined) out.spans.push({ key: ranges[f], range: r.bytes() });
    else return false;
    return true;
  });
  return out;
}

const VALUE_ROLES = { 11: 'input', 12: 'output', 13: 'value_info' };

// Calls visit({where, role, name, type, main}) for each type a serialized ModelProto
// declares: the inputs, outputs and value_info of its graph (main: true), of every
// subgraph in a node attribute (AttributeProto g 6, graphs 11; NodeProto attribute 5), of
// its functions (ModelProto.functions 25: FunctionProto value_info 12, its nodes' and its
// default attributes' (attribute_proto 11) subgraphs) and of its training graphs
// (training_info 20: initialization 1, algorithm 2); and the types attributes hold
// (AttributeProto tp 14, type_protos 15; role 'attribute', name the attribute's).
// `where` names the scope: "graph 'g'", "function 'local::f'", and for a subgraph its
// scope, the node (op type and name, or first output) and the attribute:
// "graph 'g' > If 'c' then_branch", "... > Loop 'l' body", "... graphs[1]".
function forEachTypedValue(buf, visit) {
  const attribute = (s, e, scope) => {
    const a = scanMessage(buf, s, e, { 1: 'name' }, { 6: 'g', 11: 'graphs', 14: 'tp', 15: 'type_protos' });
    const counts = { graphs: 0, type_protos: 0 };
    for (const { key, range } of a.spans) {
      const label = key === 'graphs' || key === 'type_protos' ? `${a.name || '?'}[${counts[key]++}]` : a.name || '?';
      if (key === 'tp' || key === 'type_protos') {
        visit({ where: scope, role: 'attribute', name: label, type: decodeType(buf, ...range), main: false });
      } else {
        graph(...range, `${scope} ${label}`, false);
      }
    }
  };
  const node = (s, e, scope) => {
    const n = scanMessage(buf, s, e, { 3: 'name', 4: 'opType' }, { 2: 'output', 5: 'attribute' });
    const firstOutput = n.spans.find((x) => x.key === 'output');
    const label = n.name || (firstOutput ? str(buf, firstOutput.range) : '');
    for (const { key, range } of n.spans) {
      if (key === 'attribute') attribute(...range, `${scope} > ${n.opType || '?'} '${label}'`);
    }
  };
  const declarations = (spans, scope, main) => {
    for (const { key, range } of spans) {
      if (key === 'node') node(...range, scope);
      else if (key === 'attribute') attribute(...range, `${scope} default`);
      else {
        const vi = decodeValueInfo(buf, ...range);
        visit({ where: scope, role: key, name: vi.name, type: vi.type, main });
      }
    }
  };
  const graph = (s, e, scope, main) => {
    const g = scanMessage(buf, s, e, { 2: 'name' }, { 1: 'node', ...VALUE_ROLES });
    declarations(g.spans, scope || `graph '${g.name || ''}'`, main);
  };
  const fn = (s, e) => {
    const f = scanMessage(buf, s, e, { 1: 'name', 10: 'domain', 13: 'overload' }, { 7: 'node', 11: 'attribute', 12: 'value_info' });
    const id = `${f.domain || ''}::${f.name || ''}${f.overload ? `:${f.overload}` : ''}`;
    declarations(f.spans, `function '${id}'`, false);
  };
  let training = 0;
  forEachField(buf, 0, buf.length, (f, w, r) => {
    if (w !== LEN) return false;
    if (f === 7) graph(...r.bytes(), '', true);
    else if (f === 25) fn(...r.bytes());
    else if (f === 20) {
      const t = scanMessage(buf, ...r.bytes(), {}, { 1: 'initialization', 2: 'algorithm' });
      for (const { key, range } of t.spans) graph(...range, `training_info[${training}] ${key}`, false);
      training++;
    } else return false;
    return true;
  });
}

// ---------------------------------------------------------------------------------------
// Encoding: the two pieces ort_types.js and the tests' model builder need.

// A varint; int64 values below zero take 10 bytes (two's complement).
function varintBytes(value) {
  let v = BigInt.asUintN(64, BigInt(value));
  const out = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return Buffer.from(out);
}

// A length-delimited field (wire type 2): key, length, bytes.
function lengthDelimited(field, bytes) {
  return Buffer.concat([varintBytes((field << 3) | LEN), varintBytes(bytes.length), bytes]);
}

// ---------------------------------------------------------------------------------------
// Rewriting: a message copied field by field, some fields replaced.

// The fields of the message in buf[start, end), each as it is, or as `rewrite(field, wire,
// from, to)` gives it (bytes of whole fields, key included; an empty buffer drops it)
// when that returns something; [from, to) spans the field, key included.
function copyFields(buf, start, end, rewrite) {
  const parts = [];
  const r = new Reader(buf, start, end);
  while (!r.done()) {
    const from = r.pos;
    const [field, wire] = r.key();
    r.skip(field, wire);
    const replaced = rewrite(field, wire, from, r.pos);
    parts.push(replaced === undefined ? buf.subarray(from, r.pos) : replaced);
  }
  return Buffer.concat(parts);
}

// The [start, end) of the payload of the length-delimited field at buf[from, to).
function payload(buf, from, to) {
  const r = new Reader(buf, from, to);
  r.key();
  return r.bytes();
}

// The model without what it declares about the values inside it: the graph's value_info
// (GraphProto field 13) and its functions' (FunctionProto field 12). The graph's inputs
// and outputs keep their types; subgraphs are left as they are.
function withoutValueInfo(bytes) {
  const drop = (fieldToDrop) => (buf, from, to) => {
    const [s, e] = payload(buf, from, to);
    const kept = copyFields(buf, s, e, (f, w) => (f === fieldToDrop && w === LEN ? Buffer.alloc(0) : undefined));
    const r = new Reader(buf, from, to);
    return lengthDelimited(r.key()[0], kept);
  };
  const graph = drop(13);
  const fn = drop(12);
  return copyFields(bytes, 0, bytes.length, (field, wire, from, to) => {
    if (wire !== LEN) return undefined;
    if (field === 7) return graph(bytes, from, to);
    if (field === 25) return fn(bytes, from, to);
    return undefined;
  });
}

module.exports = {
  decodeModel,
  decodeType,
  decodeShape,
  dimsOfType,
  forEachTypedValue,
  ELEM_TYPES,
  Reader,
  forEachField,
  varintBytes,
  lengthDelimited,
  copyFields,
  payload,
  withoutValueInfo,
};
