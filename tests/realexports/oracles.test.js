'use strict';
// Tests of the oracles the realexports tests rest on: coverage.js against a baseline,
// withoutValueInfo, and ort_types.js on a model flattened by realexports-flatten (types
// inside functions, symbols per call). Run: node --test tests/realexports/
// SHAPEPROP_TOOL (onnx-infer-shapes) and SHAPEPROP_FLATTEN (realexports-flatten) name
// the binaries; ctest realexports.oracles sets both.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const onnx = require('../equiv/onnx_builder');
const { DT, pb } = onnx;
const { decodeModel, withoutValueInfo } = require('../../tools/equiv/onnx_proto');
const coverage = require('../../tools/equiv/coverage');
const types = require('../../tools/equiv/ort_types');

let tmp;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shapeprop-oracles-'));
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// Y = Relu(Concat(X, X)): X [N,3]; t declared `tDims` (none when null).
function model(tDims) {
  const base = onnx.model({
    nodes: [onnx.node('Concat', ['X', 'X'], ['t'], { axis: 0 }), onnx.node('Relu', ['t'], ['Y'])],
    inputs: [['X', DT.FLOAT, ['N', 3]]],
    outputs: [['Y', DT.FLOAT, [null, 3]]],
  });
  const file = path.join(tmp, `m${fs.readdirSync(tmp).length}.onnx`);
  fs.writeFileSync(file, tDims ? Buffer.concat([base, pb.message(7, [pb.bytes(13, onnx.valueInfo('t', DT.FLOAT, tDims))])]) : base);
  return file;
}

function baselines(entry) {
  const file = path.join(tmp, `b${fs.readdirSync(tmp).length}.json`);
  fs.writeFileSync(file, JSON.stringify({ models: { 'x.onnx': entry } }));
  return file;
}

test('coverage: ONNX knowing a dim, a symbol or a rank the model lacks is a problem', () => {
  const onnxSays = { t: [1, ['unk__0', 3]], Y: [1, [6, 3]] };
  const b = baselines({ values: 2, onnx: { determined: 2, typed: onnxSays }, ort: { ran: false } });
  // t typed [2*N,3] covers unk__0; Y's [?,3] misses ONNX's 6.
  let r = coverage.compareCoverage(model(['2*N', 3]), b, 'x.onnx');
  assert.equal(r.ok, false);
  assert.deepEqual(r.problems, ["Y: ONNX's InferShapes types it elem 1 [6,3], the model says [?,3] (dim 0)"]);
  assert.equal(r.determined, 1);
  // t untyped: ONNX knows more there too.
  r = coverage.compareCoverage(model(null), b, 'x.onnx');
  assert.match(r.problems[0], /^t: .* the model leaves it untyped$/);
  // Nothing ONNX knows beyond the model: ok.
  const b2 = baselines({ values: 2, onnx: { determined: 1, typed: { t: [1, [null, 3]] } }, ort: { ran: false } });
  assert.equal(coverage.compareCoverage(model(['2*N', 3]), b2, 'x.onnx').ok, true);
});

test("coverage: fewer values fully determined than ORT's symbolic inference is a problem", () => {
  const b = baselines({
    values: 2,
    onnx: { determined: 0, typed: {} },
    ort: { ran: true, determined: 2, determined_values: ['Y', 't'] },
  });
  const r = coverage.compareCoverage(model(['2*N', 3]), b, 'x.onnx');
  assert.equal(r.ok, false);
  assert.match(r.problems[0], /^1 values fully determined, fewer than .* 2 \(it determines Y\)$/);
  const b2 = baselines({ values: 2, onnx: { determined: 0, typed: {} }, ort: { ran: true, determined: 1, determined_values: ['t'] } });
  assert.equal(coverage.compareCoverage(model(['2*N', 3]), b2, 'x.onnx').ok, true);
  assert.throws(() => coverage.compareCoverage(model(null), b2, 'other.onnx'), /no baseline for 'other.onnx'/);
});

const PEERS_ORT = coverage.PEERS.ort;

test("coverage: a dim ORT's symbolic inference writes exactly, left fresh or unknown by the model, is a problem", () => {
  // ORT: t is [2*N,3] (an expression of the input's N), Y [?,3].
  const ortSays = { t: [1, ['2*N', 3]], Y: [1, [null, 3]] };
  const b = baselines({
    values: 2,
    onnx: { determined: 0, typed: {} },
    ort: { ran: true, determined: 1, determined_values: ['t'], typed: ortSays },
  });
  let r = coverage.compareCoverage(model(['dyn__0', 3]), b, 'x.onnx');
  assert.equal(r.ok, false);
  assert.deepEqual(r.problems, ["t: ONNX Runtime's symbolic inference types it [2*N,3], the model says [dyn__0,3] (dim 0: 2*N)"]);
  r = coverage.compareCoverage(model([null, 3]), b, 'x.onnx');
  assert.match(r.problems[0], /^t: .* the model says \[\?,3\] \(dim 0: 2\*N\)$/);
  // Any non-fresh dim of ours answers it (its truth is ort_types.js's question); a number
  // must be there too. ORT's own fresh name (unk__1) asks only for a dim that is a symbol
  // or a number (knowsMore, as ONNX's unk__N), not for an exact one.
  assert.equal(coverage.compareCoverage(model(['2*N', 3]), b, 'x.onnx').ok, true);
  const numbers = baselines({ values: 2, onnx: { determined: 0, typed: {} },
    ort: { ran: true, determined: 1, determined_values: ['t'], typed: { t: [1, [null, 3]] } } });
  assert.match(coverage.compareCoverage(model(['2*N', 'dyn__4']), numbers, 'x.onnx').problems[0], /\(dim 1: 3\)$/);
  assert.ok(coverage.symbolicKnowsMore('v', [1, ['floor(N/2 - 1/2) + 1']], [1, ['dyn__2']], new Set(['N'])));
  assert.equal(coverage.symbolicKnowsMore('v', [1, ['unk__3*N']], [1, ['dyn__2']], new Set(['N'])), '');
  assert.equal(coverage.knowsMore('v', [1, ['unk__1', 3]], [1, ['dyn__2', 3]], PEERS_ORT), '');
  assert.ok(coverage.knowsMore('v', [1, ['unk__1', 3]], [1, [null, 3]], PEERS_ORT));
  // onnx-shape-inference and OnnxSlim are held to the same: a number or an expression of
  // theirs where ours is fresh, and a rank where ours has none.
  const osi = baselines({ values: 2, onnx: { determined: 0, typed: {} }, ort: { ran: false, error: 'x' },
    osi: { ran: true, determined: 1, determined_values: ['t'], typed: { t: [1, ['N+1', 3]] } },
    onnxslim: { ran: true, determined: 0, determined_values: [], typed: { t: [1, [null, null]] } } });
  r = coverage.compareCoverage(model(['dyn__0', 3]), osi, 'x.onnx');
  assert.deepEqual(r.problems, ['t: onnx-shape-inference types it [N+1,3], the model says [dyn__0,3] (dim 0: N+1)']);
  assert.equal(coverage.compareCoverage(model(['N+1', 3]), osi, 'x.onnx').ok, true);
});

test('withoutValueInfo drops what a model declares inside, and keeps its inputs and outputs', () => {
  const file = model(['2*N', 3]);
  assert.equal(decodeModel(fs.readFileSync(file)).graph.valueInfo.length, 1);
  const bare = decodeModel(withoutValueInfo(fs.readFileSync(file)));
  assert.equal(bare.graph.valueInfo.length, 0);
  assert.deepEqual(bare.graph.inputs.map((vi) => vi.name), ['X']);
  assert.deepEqual(bare.graph.outputs.map((vi) => vi.type.shape.length), [2]);
  assert.deepEqual(bare.graph.nodeOutputs, ['t', 'Y']);
});

// A function called at two sizes (N, K), its value t declared as `tType` inside it.
function functionModel(tType) {
  return `<ir_version: 10, opset_import: ["" : 18, "local" : 1]>
g (float[N] x, float[K] z) => (float[N] y, float[K] w) {
   y = local.f (x)
   w = local.f (z)
}
<domain: "local", opset_import: ["" : 18]>
f (a) => (b)
   <${tType} t>
{
   t = Relu (a)
   b = Neg (t)
}
`;
}

const tool = process.env.SHAPEPROP_TOOL;
const flatten = process.env.SHAPEPROP_FLATTEN;

async function typesInside(tType) {
  assert.ok(tool && flatten, 'SHAPEPROP_TOOL and SHAPEPROP_FLATTEN name onnx-infer-shapes and realexports-flatten');
  const text = path.join(tmp, `f${fs.readdirSync(tmp).length}.onnxtxt`);
  fs.writeFileSync(text, functionModel(tType));
  const binary = `${text}.onnx`;
  let r = spawnSync(tool, ['--no-infer', '-q', text, '-o', binary], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const flat = `${text}.flat.onnx`;
  r = spawnSync(flatten, [binary, flat], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(decodeModel(fs.readFileSync(flat)).graph.valueInfo.length, 2); // t of each call
  return types.checkTypes(flat, { bind: { N: [3, 4], K: [5, 7] } });
}

test('types inside functions: a symbol of the function holds per call', async () => {
  const r = await typesInside('float[M]');
  assert.equal(r.ok, true, JSON.stringify(r.runs));
  assert.equal(r.checked, 2 * 4); // y, w and the two t, at two bindings
});

test("types inside functions: an input's symbol or a number there is checked, naming the call", async () => {
  let r = await typesInside('float[N]');
  assert.equal(r.ok, false);
  assert.match(r.runs[0].problems[0], /^t__2 \(local::f: t \(call graph > local.f\)\): declared float32\[N\], ONNX Runtime gives float32\[5\] \(dim 0: N is 3 here\)$/);
  r = await typesInside('float[3]');
  assert.equal(r.ok, false);
  assert.equal(r.runs[0].problems.length, 1); // the second call's t (the first is 3)
  assert.equal(r.runs[1].problems.length, 2); // N = 4: both
});

// static_shapes.js's checks: shape ops left or fed by a computed shape, and a value whose
// type is not static, are problems; a static graph has none.
const staticShapes = require('./static_shapes');

test('static shapes: a Shape op, a Reshape to a computed shape and a symbolic type are problems', () => {
  const file = model(null);  // Y [?,3] from X [N,3]
  const shaped = onnx.model({
    nodes: [onnx.node('Shape', ['X'], ['s']), onnx.node('Reshape', ['X', 's'], ['Y'])],
    inputs: [['X', DT.FLOAT, ['N', 3]]],
    outputs: [['Y', DT.FLOAT, ['N', 3]]],
  });
  const g = staticShapes.graphNodes(shaped);
  assert.deepEqual(staticShapes.opProblems(g), ["Shape 's' is left", "Reshape 'Y' takes 's', no constant"]);
  assert.deepEqual(staticShapes.typeProblems(decodeModel(shaped), g), ["'X' is float32[N,3]", "'Y' is float32[N,3]", "'s' is untyped"]);
  const bytes = fs.readFileSync(file);
  assert.ok(staticShapes.typeProblems(decodeModel(bytes), staticShapes.graphNodes(bytes)).length > 0);
  const fixed = onnx.model({
    nodes: [onnx.node('Relu', ['X'], ['Y'])],
    inputs: [['X', DT.FLOAT, [2, 3]]],
    outputs: [['Y', DT.FLOAT, [2, 3]]],
  });
  assert.deepEqual(staticShapes.opProblems(staticShapes.graphNodes(fixed)), []);
  assert.deepEqual(staticShapes.typeProblems(decodeModel(fixed), staticShapes.graphNodes(fixed)), []);
});
