'use strict';
// Tests of the type oracle (tools/equiv/ort_types.js). Run: node --test tests/schemas/
// Models are written by tests/equiv/onnx_builder.js; value_info is added as a second
// GraphProto, which protobuf merges into the first.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const onnx = require('../equiv/onnx_builder');
const { DT, pb } = onnx;
const types = require('../../tools/equiv/ort_types');

let tmp;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shapeprop-ort-types-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function valueInfo(name, elemType, dims) {
  return pb.bytes(13, Buffer.concat([pb.string(1, name), pb.bytes(2, tensorTypeOf(elemType, dims))]));
}
function tensorTypeOf(elemType, dims) {
  const d = dims.map((x) => (typeof x === 'number' ? pb.message(1, [pb.varint(1, x)]) : x === null ? pb.message(1, []) : pb.message(1, [pb.string(2, x)])));
  return pb.message(1, [pb.varint(1, elemType), pb.message(2, d)]);
}

// Y = Relu(Concat(X, X, axis 0)) with t declared as `tDims`: X [N,3].
function model(tDims, tType = DT.FLOAT) {
  const base = onnx.model({
    nodes: [onnx.node('Concat', ['X', 'X'], ['t'], { axis: 0 }), onnx.node('Relu', ['t'], ['Y'])],
    inputs: [['X', DT.FLOAT, ['N', 3]]],
    outputs: [['Y', DT.FLOAT, ['2*N', 3]]],
  });
  const file = path.join(tmp, `m${fs.readdirSync(tmp).length}.onnx`);
  fs.writeFileSync(file, tDims ? Buffer.concat([base, pb.message(7, [valueInfo('t', tType, tDims)])]) : base);
  return file;
}

test('parses the dims shapeprop writes, and evaluates them', () => {
  const sizes = { N: 3, M: 2 };
  assert.equal(types.evaluateDim(types.parseDim('2*N'), sizes), 6);
  assert.equal(types.evaluateDim(types.parseDim('M*N+N-1'), sizes), 8);
  assert.equal(types.evaluateDim(types.parseDim('-N+7'), sizes), 4);
  assert.deepEqual(types.parseDim('batch size'), { opaque: 'batch size' });
  assert.equal(types.evaluateDim(types.parseDim('K'), sizes), undefined);
});

test('evaluates floor, ceil, min, max and division as other tools write them', () => {
  const sizes = { height: 37, batch: 3, seq: 5 };
  assert.equal(types.evaluateDim(types.parseDim('floor(height/2 - 1/2) + 1'), sizes), 19);
  assert.equal(types.evaluateDim(types.parseDim('ceiling(height/4)'), sizes), 10);
  assert.equal(types.evaluateDim(types.parseDim('height//2'), sizes), 18);
  assert.equal(types.evaluateDim(types.parseDim('batch - floor(batch/2)'), sizes), 2);
  assert.equal(types.evaluateDim(types.parseDim('Max(batch, seq)*2'), sizes), 10);
  // Not an integer, or not an expression: nothing to compare with.
  assert.equal(types.evaluateDim(types.parseDim('height/2'), sizes), undefined);
  assert.deepEqual(types.parseDim('/model/Shape_output_0_dim_2'), { opaque: '/model/Shape_output_0_dim_2' });
  assert.deepEqual(types.parseDim('unknown(batch)'), { opaque: 'unknown(batch)' });
});

test('a dim scoped to one call is its input symbol or expression, or a symbol of that call', () => {
  const sizes = { batch: 3, seq: 5 };
  assert.equal(types.evaluateDim(types.scopedDim('batch@@4', sizes), sizes), 3);
  assert.equal(types.evaluateDim(types.scopedDim('batch*seq@@4', sizes), sizes), 15);
  assert.deepEqual(types.scopedDim('unk__0@@4', sizes), { opaque: 'unk__0@@4' });
  assert.deepEqual(types.scopedDim('2*unk__0@@4', sizes), { opaque: '2*unk__0@@4' });
});

test('declared types that hold agree at every binding, symbolic expressions included', async () => {
  const r = await types.checkTypes(model(['2*N', 3]), { bind: { N: [1, 4] } });
  assert.equal(r.ok, true);
  assert.equal(r.runs.length, 2);
  assert.equal(r.fullyTyped, true);
});

test('a wrong dim, rank or element type is a mismatch naming the value', async () => {
  for (const [dims, type, why] of [
    [['N', 3], DT.FLOAT, 'dim 0'],
    [['2*N'], DT.FLOAT, 'rank'],
    [['2*N', 3], DT.DOUBLE, 'element type'],
  ]) {
    const r = await types.checkTypes(model(dims, type), { bind: { N: [1, 4] } });
    assert.equal(r.ok, false, why);
    assert.match(r.runs[0].problems[0], new RegExp(`^t: declared .*\\(${why}`));
  }
});

test('a symbol only outputs name takes one size in a run; an unknown dim is reported as partial', async () => {
  let r = await types.checkTypes(model(['unk__0', 3]), { bind: { N: [2] } });
  assert.equal(r.ok, true);
  r = await types.checkTypes(model([null, 3]), { bind: { N: [2] } });
  assert.equal(r.ok, true);
  assert.deepEqual([...r.partial], ['t']);
  assert.equal(r.fullyTyped, false);
});

test('a value without a type is reported; the CLI fails on it with --require-full', async () => {
  const file = model(null);
  const r = await types.checkTypes(file, { bind: { N: [2] } });
  assert.deepEqual(r.untyped, ['t']);
  const lines = [];
  const out = { write: (s) => lines.push(s) };
  assert.equal(await types.main([file, '--bind', 'N=2', '--require-full', '--quiet'], out, out), 1);
  assert.match(lines.join(''), /NOT FULLY TYPED .*no type for t/);
  assert.equal(await types.main([file, '--bind', 'N=2', '--quiet'], out, out), 0);
});

test('--fill gives an integer input the value of an expression of the binding', async () => {
  // Y = Reshape(X, shape) with shape filled as 2*N: X [N,2] -> Y [2*N]... as [M] here.
  const base = onnx.model({
    nodes: [onnx.node('Expand', ['X', 'shape'], ['Y'])],
    inputs: [['X', DT.FLOAT, [1]], ['shape', DT.INT64, [1]]],
    outputs: [['Y', DT.FLOAT, ['2*N']]],
  });
  const file = path.join(tmp, 'fill.onnx');
  fs.writeFileSync(file, base);
  const r = await types.checkTypes(file, { bind: { N: [1, 3] }, fill: { shape: '2*N' } });
  assert.equal(r.ok, true);
  const wrong = await types.checkTypes(file, { bind: { N: [1, 3] }, fill: { shape: 'N' } });
  assert.equal(wrong.ok, false);
});

test('a value of a type the binding cannot return is checked through a Cast to float', async () => {
  // Y = Cast<to float>(t), t = Cast<to int2>(Concat(X, X)) at opset 25 / IR 13: t [2*N,3].
  const INT2 = 26;
  const UINT2 = 25;
  const at = (tDims, tType) => {
    const base = onnx.model({
      nodes: [
        onnx.node('Concat', ['X', 'X'], ['c'], { axis: 0 }),
        onnx.node('Cast', ['c'], ['t'], { to: INT2 }),
        onnx.node('Cast', ['t'], ['Y'], { to: DT.FLOAT }),
      ],
      inputs: [['X', DT.FLOAT, ['N', 3]]],
      outputs: [['Y', DT.FLOAT, ['2*N', 3]]],
      opset: 25,
      irVersion: 13,
    });
    const file = path.join(tmp, `int2_${fs.readdirSync(tmp).length}.onnx`);
    const declared = [valueInfo('c', DT.FLOAT, ['2*N', 3]), valueInfo('t', tType, tDims)];
    fs.writeFileSync(file, Buffer.concat([base, pb.message(7, declared)]));
    return file;
  };
  const r = await types.checkTypes(at(['2*N', 3], INT2), { bind: { N: [1, 4] } });
  assert.equal(r.ok, true);
  assert.equal(r.fullyTyped, true);
  const dim = await types.checkTypes(at(['N', 3], INT2), { bind: { N: [1, 4] } });
  assert.equal(dim.ok, false);
  assert.match(dim.runs[0].problems[0], /^t: declared int2\[N,3\], ONNX Runtime gives int2\[2,3\] \(dim 0/);
  await assert.rejects(types.checkTypes(at(['2*N', 3], UINT2), { bind: { N: [1] } }), /tensor\(uint2\).*tensor\(int2\)/);
});
