'use strict';
// Tests of the dim-param oracle (tools/equiv/dim_params.js) and what it rests on in
// onnx_proto.js: nested types (sequence, optional, map, sparse tensor) decoded, and every
// typed value of a model reached (graph, subgraphs, functions, attribute types). Models
// are built here byte by byte. Run: node --test tests/realexports/dim_params.test.js
// With SHAPEPROP_TOOL (onnx-infer-shapes; ctest realexports.dim_params sets it), one more
// test runs the tool on a sequence model and checks what it writes.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { pb, DT, tensorType } = require('../equiv/onnx_builder');
const { decodeModel, decodeType, forEachTypedValue, dimsOfType, payload } = require('../../tools/equiv/onnx_proto');
const { dimParamOffences, parseDimExpression, main } = require('../../tools/equiv/dim_params');

// TypeProto bytes: tensor_type 1, sequence_type 4, map_type 5, sparse_tensor_type 8,
// optional_type 9.
const T = {
  tensor: (dims, elem = DT.FLOAT) => tensorType(elem, dims),
  sequence: (elem) => pb.message(4, [pb.bytes(1, elem)]),
  optional: (elem) => pb.message(9, [pb.bytes(1, elem)]),
  map: (key, value) => pb.message(5, [pb.varint(1, key), pb.bytes(2, value)]),
  sparse: (dims, elem = DT.FLOAT) => {
    const t = tensorType(elem, dims);
    return pb.bytes(8, t.subarray(...payload(t, 0, t.length)));
  },
};

// ValueInfoProto{name 1, type 2}; `type` TypeProto bytes.
const vi = (name, type) => Buffer.concat([pb.string(1, name), pb.bytes(2, type)]);

// NodeProto{input 1, output 2, op_type 4, attribute 5}; attributes {name: GraphProto bytes}
// (AttributeProto{name 1, g 6, type 20 = GRAPH 5}).
function node(opType, inputs, outputs, graphs = {}) {
  return Buffer.concat([
    ...inputs.map((s) => pb.string(1, s)),
    ...outputs.map((s) => pb.string(2, s)),
    pb.string(4, opType),
    ...Object.entries(graphs).map(([k, g]) => pb.message(5, [pb.string(1, k), pb.bytes(6, g), pb.varint(20, 5)])),
  ]);
}

// GraphProto{node 1, name 2, input 11, output 12, value_info 13}: values [name, TypeProto].
function graph({ name = 'g', nodes = [], inputs = [], outputs = [], valueInfo = [] }) {
  return Buffer.concat([
    ...nodes.map((n) => pb.bytes(1, n)),
    pb.string(2, name),
    ...inputs.map(([n, t]) => pb.bytes(11, vi(n, t))),
    ...outputs.map(([n, t]) => pb.bytes(12, vi(n, t))),
    ...valueInfo.map(([n, t]) => pb.bytes(13, vi(n, t))),
  ]);
}

// FunctionProto{name 1, input 4, output 5, node 7, domain 10, value_info 12}.
function fn({ name, domain = 'local', inputs, outputs, nodes, valueInfo = [] }) {
  return Buffer.concat([
    pb.string(1, name),
    ...inputs.map((s) => pb.string(4, s)),
    ...outputs.map((s) => pb.string(5, s)),
    ...nodes.map((n) => pb.bytes(7, n)),
    pb.string(10, domain),
    ...valueInfo.map(([n, t]) => pb.bytes(12, vi(n, t))),
  ]);
}

// ModelProto{ir_version 1, graph 7, opset_import 8, functions 25}.
function model(g, functions = []) {
  return Buffer.concat([
    pb.varint(1, 10),
    pb.bytes(7, graph(g)),
    pb.message(8, [pb.string(1, ''), pb.varint(2, 18)]),
    pb.message(8, [pb.string(1, 'local'), pb.varint(2, 1)]),
    ...functions.map((f) => pb.bytes(25, fn(f))),
  ]);
}

// The model shapeprop is given in most tests: X [batch, seq, "batch size"] -> Y.
const INPUT = model({
  nodes: [node('Relu', ['X'], ['Y'])],
  inputs: [['X', T.tensor(['batch', 'seq', 'batch size'])]],
  outputs: [['Y', T.tensor([null, 'seq', 'batch size'])]],
});

// The output: INPUT's graph with `valueInfo` and `outputs` declared, and `functions`.
function written({ valueInfo = [], outputs = [['Y', T.tensor(['batch', 'seq', 'batch size'])]], functions = [], nodes, inputs } = {}) {
  return model({
    nodes: nodes || [node('Relu', ['X'], ['Y'])],
    inputs: inputs || [['X', T.tensor(['batch', 'seq', 'batch size'])]],
    outputs,
    valueInfo,
  }, functions);
}

const texts = (offences) => offences.map((o) => o.text);

test('nested types decode; a tensor type keeps its shape {kind, elemType, dtype, shape}', () => {
  const type = (bytes) => decodeType(bytes, 0, bytes.length);
  assert.deepEqual(type(T.tensor(['N', 3, null])), {
    kind: 'tensor', elemType: 1, dtype: 'float32', shape: [{ param: 'N' }, { value: 3 }, {}],
  });
  assert.deepEqual(type(T.tensor(null, DT.INT64)), { kind: 'tensor', elemType: 7, dtype: 'int64', shape: null });
  const nested = type(T.map(DT.STRING, T.optional(T.sequence(T.tensor(['S', 2])))));
  assert.deepEqual(nested, {
    kind: 'map', keyType: 8, keyDtype: 'string',
    value: { kind: 'optional', elem: { kind: 'sequence', elem: { kind: 'tensor', elemType: 1, dtype: 'float32', shape: [{ param: 'S' }, { value: 2 }] } } },
  });
  assert.deepEqual(dimsOfType(nested).map((d) => [d.path, d.dim]), [
    ['value: elem: elem: dim 0', { param: 'S' }],
    ['value: elem: elem: dim 1', { value: 2 }],
  ]);
  assert.deepEqual(type(T.sparse(['R', 4], DT.INT64)), {
    kind: 'sparse_tensor', elemType: 7, dtype: 'int64', shape: [{ param: 'R' }, { value: 4 }],
  });
  assert.deepEqual(type(pb.message(4, [])), { kind: 'sequence', elem: null });
  assert.deepEqual(type(Buffer.alloc(0)), { kind: 'none' });
});

test('every typed value is reached: graph, subgraphs, functions and their subgraphs, attribute types', () => {
  const branch = (n) => graph({ name: n, outputs: [[`${n}_out`, T.tensor(['A'])]], valueInfo: [[`${n}_t`, T.tensor(['B'])]] });
  const cast = Buffer.concat([pb.string(2, 'c'), pb.string(4, 'Typed'),
    pb.message(5, [pb.string(1, 'to'), pb.bytes(14, T.tensor(['C'])), pb.varint(20, 13)])]);
  const bytes = written({
    nodes: [node('If', ['cond'], ['r'], { then_branch: branch('then'), else_branch: branch('else') }), cast],
    valueInfo: [['r', T.sequence(T.tensor(['D']))]],
    functions: [{
      name: 'f', inputs: ['a'], outputs: ['b'],
      nodes: [node('Loop', ['m', '', 'a'], ['b'], { body: branch('body') })],
      valueInfo: [['b', T.optional(T.tensor(['E']))]],
    }],
  });
  const seen = [];
  forEachTypedValue(bytes, (v) => seen.push([v.where, v.role, v.name, v.main, dimsOfType(v.type).map((d) => d.dim.param).join()]));
  assert.deepEqual(seen, [
    ["graph 'g' > If 'r' then_branch", 'output', 'then_out', false, 'A'],
    ["graph 'g' > If 'r' then_branch", 'value_info', 'then_t', false, 'B'],
    ["graph 'g' > If 'r' else_branch", 'output', 'else_out', false, 'A'],
    ["graph 'g' > If 'r' else_branch", 'value_info', 'else_t', false, 'B'],
    ["graph 'g' > Typed 'c'", 'attribute', 'to', false, 'C'],
    ["graph 'g'", 'input', 'X', true, 'batch,seq,batch size'],
    ["graph 'g'", 'output', 'Y', true, 'batch,seq,batch size'],
    ["graph 'g'", 'value_info', 'r', true, 'D'],
    ["function 'local::f' > Loop 'b' body", 'output', 'body_out', false, 'A'],
    ["function 'local::f' > Loop 'b' body", 'value_info', 'body_t', false, 'B'],
    ["function 'local::f'", 'value_info', 'b', false, 'E'],
  ]);
  // decodeModel still reads the same graph.
  assert.deepEqual(decodeModel(bytes).graph.valueInfo.map((v) => v.type.kind), ['sequence']);
  // A function's default attribute (FunctionProto attribute_proto 11) and a training graph
  // (ModelProto training_info 20: initialization 1).
  const more = Buffer.concat([
    written(),
    pb.message(25, [pb.string(1, 'h'), pb.string(10, 'local'),
      pb.message(11, [pb.string(1, 'g'), pb.bytes(6, branch('dflt')), pb.varint(20, 5)])]),
    pb.message(20, [pb.bytes(1, branch('init'))]),
  ]);
  const wheres = [];
  forEachTypedValue(more, (v) => wheres.push(`${v.where}: ${v.name}`));
  assert.deepEqual(wheres.slice(2), [
    "function 'local::h' default g: dflt_out", "function 'local::h' default g: dflt_t",
    'training_info[0] initialization: init_out', 'training_info[0] initialization: init_t',
  ]);
});

test('the grammar of docs/dims.md parses; text outside it does not', () => {
  const ok = {
    'batch': ['batch'],
    '2*floor(batch/2)': ['batch'],
    'min(seq,128)+1': ['seq'],
    '-2*floor(N/2)+N': ['N'],
    'floor((H+3)/4)': ['H'],
    'floor(min(S,12)/2)': ['S'],
    'max(S,1)-1': ['S'],
    'batch*seq+2*dyn__0': ['batch', 'seq', 'dyn__0'],
    '7': [],
  };
  for (const [text, ids] of Object.entries(ok)) assert.deepEqual(parseDimExpression(text), ids, text);
  const bad = ['\x010', 'S - 1', 'ceil(N/2)', 'floor(N/1)', 'floor(N)', '(N)', '2*', 'N+', 'min(N)', 'batch size',
    'floor(N/2', 'N/2', '', '99999999999999999999', '2N', 'min(S,128))'];
  for (const text of bad) assert.throws(() => parseDimExpression(text), SyntaxError, JSON.stringify(text));
});

test('clean: names of the input, fresh names, expressions over them, an opaque name kept as it is', () => {
  const out = written({
    valueInfo: [
      ['a', T.tensor(['dyn__3', 'unk__0', 'batch size'])],
      ['b', T.tensor(['2*floor(batch/2)', 'min(seq,128)+1', 'floor(dyn__3/2)'])],
      ['s', T.sequence(T.tensor(['batch', 'unk__12', 4]))],
    ],
  });
  assert.deepEqual(texts(dimParamOffences(INPUT, out)), []);
  // A renamed input dim is a name of the output's model.
  const renamed = written({ inputs: [['X', T.tensor(['B', 'seq', 'batch size'])]], valueInfo: [['a', T.tensor(['2*B'])]] });
  assert.deepEqual(texts(dimParamOffences(INPUT, renamed)), []);
  // A name of the input, whatever its text, may be written: even a control character.
  const odd = model({ inputs: [['X', T.tensor(['x\x01y'])]], outputs: [['Y', T.tensor([null])]] });
  assert.deepEqual(texts(dimParamOffences(odd, model({ inputs: [['X', T.tensor(['x\x01y'])]], outputs: [['Y', T.tensor(['x\x01y'])]] }))), []);
});

test('a marker in a sequence element type and on the tensor SequenceAt gives is an offence', () => {
  const out = written({
    nodes: [node('SplitToSequence', ['X'], ['parts']), node('SequenceAt', ['parts', 'i'], ['Y'])],
    valueInfo: [['parts', T.sequence(T.tensor(['\x010', 'seq', 8]))]],
    outputs: [['Y', T.tensor(['\x010', 'seq', 8])]],
  });
  assert.deepEqual(texts(dimParamOffences(INPUT, out)), [
    "graph 'g': output 'Y' (dim 0): dim_param \"\\x010\" holds a character outside printable ASCII",
    "graph 'g': value_info 'parts' (elem: dim 0): dim_param \"\\x010\" holds a character outside printable ASCII",
  ]);
  // Nested deeper, and in an optional or a map.
  const deep = written({
    valueInfo: [['o', T.optional(T.sequence(T.tensor(['\x7f'])))], ['m', T.map(DT.INT64, T.tensor(['s\x00']))]],
  });
  assert.deepEqual(dimParamOffences(INPUT, deep).map((o) => [o.name, o.path, o.param]), [
    ['o', 'elem: elem: dim 0', '\x7f'],
    ['m', 'value: dim 0', 's\x00'],
  ]);
  // A control character is an offence even where the rest would parse; and in a renamed
  // graph input, which is then no name of the model.
  const renamed = written({ inputs: [['X', T.tensor(['\x01batch', 'seq', 'batch size'])]] });
  assert.deepEqual(dimParamOffences(INPUT, renamed).map((o) => [o.role, o.problem]), [
    ['input', 'holds a character outside printable ASCII'],
  ]);
  const sparse = written({ valueInfo: [['sp', T.sparse(['batch\t'])]] });
  assert.match(texts(dimParamOffences(INPUT, sparse))[0], /^graph 'g': value_info 'sp' \(dim 0\): dim_param "batch\\x09" holds a character outside printable ASCII$/);
});

test('a foreign name in a function value_info or a subgraph, an expression over an unknown name, text outside the grammar', () => {
  const inFunction = written({
    functions: [{ name: 'f', inputs: ['a'], outputs: ['b'], nodes: [node('Neg', ['a'], ['b'])], valueInfo: [['b', T.tensor(['M', 'batch'])]] }],
  });
  assert.deepEqual(texts(dimParamOffences(INPUT, inFunction)), [
    "function 'local::f': value_info 'b' (dim 0): dim_param \"M\" is not a dim name of the input nor a fresh name (dyn__N, unk__N)",
  ]);
  const inSubgraph = written({
    nodes: [node('If', ['c'], ['Y'], { then_branch: graph({ name: 't', outputs: [['t_out', T.tensor(['seq', 'K2'])]] }) })],
  });
  assert.deepEqual(texts(dimParamOffences(INPUT, inSubgraph)), [
    "graph 'g' > If 'Y' then_branch: output 't_out' (dim 1): dim_param \"K2\" is not a dim name of the input nor a fresh name (dyn__N, unk__N)",
  ]);
  const expression = written({ valueInfo: [['e', T.tensor(['2*K+batch', 'min(seq,J)+dyn__1*L'])]] });
  assert.deepEqual(dimParamOffences(INPUT, expression).map((o) => o.problem), [
    "is an expression over 'K', which is not a dim name of the input nor a fresh name",
    "is an expression over 'J', 'L', which are not a dim name of the input nor a fresh name",
  ]);
  // An expression over an opaque name cannot be spelled; non-canonical-looking text
  // outside the grammar is no expression; a near-miss of a fresh name is foreign.
  const outside = written({ valueInfo: [['e', T.tensor(['batch size+1', 'ceil(seq/2)', 'dyn__', 'unk__1a'])]] });
  const problems = dimParamOffences(INPUT, outside).map((o) => o.problem);
  assert.equal(problems.length, 4);
  assert.match(problems[0], /^is neither a dim name of the input, a fresh name \(dyn__N, unk__N\) nor an expression of docs\/dims.md \(unexpected text at offset 5 of "batch size\+1"\)$/);
  assert.match(problems[1], /nor an expression of docs\/dims.md/);
  assert.match(problems[2], /^is not a dim name of the input nor a fresh name/);
  assert.match(problems[3], /^is not a dim name of the input nor a fresh name/);
});

// The CLI's streams, as strings.
async function cli(argv) {
  let out = '';
  let err = '';
  const code = await main(argv, { write: (s) => { out += s; } }, { write: (s) => { err += s; } });
  return { code, out, err };
}

test('the CLI: 0 clean, 1 a line per offence, 2 on usage and decoding errors', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shapeprop-dim-params-'));
  try {
    const file = (name, bytes) => {
      fs.writeFileSync(path.join(tmp, name), bytes);
      return path.join(tmp, name);
    };
    const input = file('in.onnx', INPUT);
    const clean = file('clean.onnx', written({ valueInfo: [['a', T.tensor(['dyn__0'])]] }));
    const bad = file('bad.onnx', written({ valueInfo: [['a', T.tensor(['\x010'])], ['b', T.tensor(['Q'])]] }));
    assert.deepEqual(await cli([input, clean]), { code: 0, out: '', err: '' });
    let r = await cli([input, bad]);
    assert.equal(r.code, 1);
    assert.deepEqual(r.out.trimEnd().split('\n').map((l) => l.replace(/ \(dim 0\).*/, '')), ["graph 'g': value_info 'a'", "graph 'g': value_info 'b'"]);
    r = await cli([input]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^dim_params: expected the input model and the model written from it\nusage:/);
    assert.equal((await cli([input, clean, '--bogus'])).code, 2);
    r = await cli([input, file('garbage.onnx', Buffer.from([0x3a, 0x05, 0x01]))]);
    assert.equal(r.code, 2);
    assert.match(r.err, /^dim_params: error: .*garbage\.onnx: length 5 at byte 2 runs past the end/);
    r = await cli([path.join(tmp, 'missing.onnx'), clean]);
    assert.equal(r.code, 2);
    assert.match(r.err, /ENOENT/);
    assert.equal((await cli(['--help'])).code, 0);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

// A sequence of chunks of a tensor whose first dim is 2*floor(batch/2) (Mixtral's
// torch.chunk): what the tool writes for parts, y, y1 and z must be names of the model or
// expressions over them (it once wrote its ONNX-inference bridge's "\x010" there).
const SEQUENCE_MODEL = `<ir_version: 8, opset_import: ["" : 18]>
g (float[batch,seq,24] x) => (float[?,seq,8] y, float[?,seq,24] z)
{
  two = Constant <value_ints = [2]> ()
  b = Shape <start = 0, end = 1> (x)
  half = Div (b, two)
  zero = Constant <value_ints = [0]> ()
  top = Slice (x, zero, half, zero)
  c = Concat <axis = 0> (top, top)
  eight = Constant <value_int = 8> ()
  parts = SplitToSequence <axis = -1> (c, eight)
  i0 = Constant <value_int = 0> ()
  i1 = Constant <value_int = 1> ()
  y = SequenceAt (parts, i0)
  y1 = SequenceAt (parts, i1)
  z = Concat <axis = -1> (y, y1, y)
}
`;

test('what onnx-infer-shapes writes for a sequence model holds no foreign dim_param', { skip: !process.env.SHAPEPROP_TOOL && 'SHAPEPROP_TOOL is not set' }, () => {
  const tool = process.env.SHAPEPROP_TOOL;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shapeprop-dim-params-'));
  try {
    const text = path.join(tmp, 'sequence.onnxtxt');
    fs.writeFileSync(text, SEQUENCE_MODEL);
    const input = path.join(tmp, 'in.onnx');
    let r = spawnSync(tool, ['--no-infer', '-q', text, '-o', input], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    for (const mode of ['annotate', 'specialize', 'inline']) {
      const out = path.join(tmp, `${mode}.onnx`);
      r = spawnSync(tool, ['--mode', mode, '-q', input, '-o', out], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(texts(dimParamOffences(fs.readFileSync(input), fs.readFileSync(out))), [], mode);
      // The sequence's elements are typed, so that the check looked at something.
      const parts = decodeModel(fs.readFileSync(out)).graph.valueInfo.find((v) => v.name === 'parts');
      if (mode === 'annotate') assert.equal(parts && parts.type.kind, 'sequence');
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});
