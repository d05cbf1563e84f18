'use strict';
// Tests of the numerical-equivalence oracle (tools/equiv). Run: node --test tests/equiv/
//
// The models are written as binary ONNX by onnx_builder.js into a temp dir, then fed to
// the CLI as a child process (to check exit codes and printed lines) or to its module API.
// The real-corpus tests read ${SHAPEPROP_CORPUS_DIR}, by default the repository's own
// tests/data/corpus.

const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const onnx = require('./onnx_builder');
const { DT, pb } = onnx;

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const EQUIV_DIR = path.join(REPO_ROOT, 'tools', 'equiv');
const EQUIV = path.join(EQUIV_DIR, 'equiv.js');
const CORPUS_DIR = process.env.SHAPEPROP_CORPUS_DIR || path.join(REPO_ROOT, 'tests', 'data', 'corpus');
const GEMMGELU = path.join(CORPUS_DIR, 'functions', 'onnxscript_gemmgelu.onnx');

const equiv = require(EQUIV);
const { decodeModel } = require(path.join(EQUIV_DIR, 'onnx_proto'));

let tmp;
before(() => {
  if (!fs.existsSync(path.join(EQUIV_DIR, 'node_modules', 'onnxruntime-node'))) {
    throw new Error(`onnxruntime-node is not installed: run 'npm ci --ignore-scripts' in ${EQUIV_DIR}`);
  }
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'shapeprop-equiv-'));
});
after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

// Writes a model to the temp dir and returns its path.
function write(name, bytes) {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  return file;
}

function runCli(...args) {
  const r = spawnSync(process.execPath, [EQUIV, ...args], { encoding: 'utf8', timeout: 120000 });
  if (r.error) throw r.error;
  const lines = r.stdout.split('\n').filter(Boolean);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, lines };
}

// Y = op(X, C) with a float32 initializer C of one element: X [N,3] float32.
function binaryWithConstant(op, c, { elemType = DT.FLOAT, dims = ['N', 3] } = {}) {
  const init =
    elemType === DT.FLOAT16
      ? { name: 'C', dataType: DT.FLOAT16, dims: [], rawData: onnx.halfRaw([equiv.floatToHalf(c)]) }
      : { name: 'C', dataType: DT.FLOAT, dims: [], floatData: [c] };
  return onnx.model({
    nodes: [onnx.node(op, ['X', 'C'], ['Y'])],
    inputs: [['X', elemType, dims]],
    outputs: [['Y', elemType, dims]],
    initializers: [init],
  });
}

// Y = op(X0, X1), both float32 [2,3].
function binary(op) {
  return onnx.model({
    nodes: [onnx.node(op, ['X0', 'X1'], ['Y'])],
    inputs: [
      ['X0', DT.FLOAT, [2, 3]],
      ['X1', DT.FLOAT, [2, 3]],
    ],
    outputs: [['Y', DT.FLOAT, [2, 3]]],
  });
}

// ---------------------------------------------------------------------------------------
describe('CLI verdicts', () => {
  test('identical models agree (exit 0), one line per seed and a final line', () => {
    const a = write('add_a.onnx', binary('Add'));
    const b = write('add_b.onnx', binary('Add'));
    const r = runCli(a, b, '--seeds', '1,2,3');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(r.lines.slice(0, 3), ['seed=1: OK', 'seed=2: OK', 'seed=3: OK']);
    assert.match(r.lines[3], /^equiv: OK .*add_a\.onnx vs .*add_b\.onnx: 3 runs agree$/);
    assert.equal(r.lines.length, 4);
  });

  test('the module API reports the same verdicts', async () => {
    const a = write('add.onnx', binary('Add'));
    const b = write('sub.onnx', binary('Sub'));
    const bad = await equiv.compareModels(a, b, { seeds: [1, 2] });
    assert.equal(bad.ok, false);
    assert.deepEqual(
      bad.runs.map((r) => [r.label, r.ok, r.outputs.map((o) => o.name)]),
      [
        ['seed=1', false, ['Y']],
        ['seed=2', false, ['Y']],
      ],
    );
    assert.ok(bad.runs[0].outputs[0].mismatches > 0);
    const good = await equiv.compareModels(a, a, { seeds: [1, 2] });
    assert.equal(good.ok, true);
    assert.equal(good.runs.length, 2);
  });

  test('Add vs Sub is a MISMATCH (exit 1) naming the output, element and both values', () => {
    const a = write('add.onnx', binary('Add'));
    const b = write('sub.onnx', binary('Sub'));
    const r = runCli(a, b, '--seeds', '7');
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.lines[0], /^seed=7: MISMATCH Y: \d+\/6 elements differ, first at \[\d+,\d+\]: A=\S+ B=\S+/);
    assert.match(r.lines[1], /^equiv: MISMATCH .* 1 of 1 runs differ; first: seed=7: Y: /);
  });

  test('a constant 1.0 vs 1.001 is beyond float32 tolerance (exit 1)', () => {
    const a = write('c1.onnx', binaryWithConstant('Add', 1.0));
    const b = write('c1001.onnx', binaryWithConstant('Add', 1.001));
    const r = runCli(a, b, '--seeds', '1,2');
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.equal(r.lines.filter((l) => / MISMATCH Y: /.test(l)).length, 2);
    // Every element differs by ~0.001.
    assert.match(r.lines[0], /MISMATCH Y: 6\/6 elements differ.*max \|diff\| 0\.001/);
  });

  test('--atol widens the tolerance so 1.0 vs 1.001 passes', () => {
    const a = write('c1.onnx', binaryWithConstant('Add', 1.0));
    const b = write('c1001.onnx', binaryWithConstant('Add', 1.001));
    const r = runCli(a, b, '--seeds', '1', '--atol', '0.01');
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  test('a difference within float32 tolerance passes (and really is a difference)', async () => {
    const a = write('c1.onnx', binaryWithConstant('Add', 1.0));
    const b = write('c1000001.onnx', binaryWithConstant('Add', 1.000001));
    const r = runCli(a, b, '--seeds', '1,2');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    // Guard against a vacuous pass: the outputs are not bit-identical.
    const res = await equiv.compareModels(a, b, { seeds: [1] });
    assert.equal(res.ok, true);
    assert.ok(res.runs[0].outputs[0].maxAbsDiff > 0);
    assert.ok(res.runs[0].outputs[0].maxAbsDiff < 1e-5);
  });

  test('tolerance depends on dtype: the same 1.0 vs 1.001 passes in float16', () => {
    const a = write('h1.onnx', binaryWithConstant('Add', 1.0, { elemType: DT.FLOAT16 }));
    const b = write('h1001.onnx', binaryWithConstant('Add', 1.001, { elemType: DT.FLOAT16 }));
    assert.equal(runCli(a, b, '--seeds', '1').status, 0);
    // ...but 1.0 vs 1.1 does not.
    const c = write('h11.onnx', binaryWithConstant('Add', 1.1, { elemType: DT.FLOAT16 }));
    const r = runCli(a, c, '--seeds', '1');
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.lines[0], /MISMATCH Y: 6\/6 elements differ/);
  });
});

// ---------------------------------------------------------------------------------------
describe('symbolic dims', () => {
  test('--bind runs each binding, and the lines show both', () => {
    const a = write('sym_a.onnx', binaryWithConstant('Mul', 2.0));
    const b = write('sym_b.onnx', binaryWithConstant('Mul', 2.0));
    const r = runCli(a, b, '--seeds', '1,2', '--bind', 'N=2,5');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(r.lines.slice(0, 4), ['seed=1 N=2: OK', 'seed=2 N=2: OK', 'seed=1 N=5: OK', 'seed=2 N=5: OK']);
    assert.match(r.lines[4], /4 runs agree/);
  });

  test('the binding really sets the input size', async () => {
    const a = write('sym_a.onnx', binaryWithConstant('Mul', 2.0));
    const sizes = [];
    await equiv.compareModels(a, a, {
      seeds: [1],
      bind: { N: [4, 1] },
      onRun: (run) => sizes.push(run.outputs[0].mismatches === 0 && run.symbols.N),
    });
    assert.deepEqual(sizes, [4, 1]);
    // A mismatch report shows the size: Add vs Mul at N=5 reports k/15 elements.
    const b = write('sym_add.onnx', binaryWithConstant('Add', 2.0));
    const r = runCli(a, b, '--seeds', '1', '--bind', 'N=5');
    assert.equal(r.status, 1);
    assert.match(r.lines[0], /^seed=1 N=5: MISMATCH Y: \d+\/15 elements differ/);
  });

  test('several --bind lists are zipped; unbound dims take --default-dim', () => {
    const m = onnx.model({
      nodes: [onnx.node('MatMul', ['X', 'W'], ['Y'])],
      inputs: [
        ['X', DT.FLOAT, ['B', 'K']],
        ['W', DT.FLOAT, ['K', 'M']],
      ],
      outputs: [['Y', DT.FLOAT, ['B', 'M']]],
    });
    const a = write('mm.onnx', m);
    let r = runCli(a, a, '--seeds', '1', '--bind', 'B=1,3', '--bind', 'K=4,5', '--default-dim', '6');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.deepEqual(r.lines.slice(0, 2), ['seed=1 B=1 K=4 M=6: OK', 'seed=1 B=3 K=5 M=6: OK']);
    // A one-value list applies to every run.
    r = runCli(a, a, '--seeds', '1', '--bind', 'B=1,3', '--bind', 'K=4');
    assert.deepEqual(r.lines.slice(0, 2), ['seed=1 B=1 K=4 M=2: OK', 'seed=1 B=3 K=4 M=2: OK']);
    // Lists of different lengths (other than 1) are a usage error.
    r = runCli(a, a, '--bind', 'B=1,3', '--bind', 'K=4,5,6');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /--bind B has 2 values/);
  });

  test('a dim static in one model and symbolic in the other takes the static size', () => {
    const a = write('dyn.onnx', binaryWithConstant('Add', 1.0, { dims: ['N', 3] }));
    const b = write('static.onnx', binaryWithConstant('Add', 1.0, { dims: [4, 3] }));
    const r = runCli(a, b, '--seeds', '1', '--bind', 'N=2');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(r.lines[0], 'seed=1 N=4: OK');
    // ...everywhere the symbol occurs: Y [N] is static in neither model.
    const two = (d0) =>
      onnx.model({
        nodes: [onnx.node('Add', ['X', 'Y'], ['Z'])],
        inputs: [
          ['X', DT.FLOAT, [d0]],
          ['Y', DT.FLOAT, ['N']],
        ],
        outputs: [['Z', DT.FLOAT, ['N']]],
      });
    const r2 = runCli(write('two_dyn.onnx', two('N')), write('two_static.onnx', two(5)), '--seeds', '1');
    assert.equal(r2.status, 0, r2.stdout + r2.stderr);
    assert.equal(r2.lines[0], 'seed=1 N=5: OK');
    const sig = (bytes) => ({ inputs: decodeModel(bytes).feedInputs });
    const { shapes } = equiv.resolveShapes(sig(two('N')), sig(two(5)), {}, 2);
    assert.deepEqual([...shapes], [
      ['X', [5]],
      ['Y', [5]],
    ]);
  });
});

// ---------------------------------------------------------------------------------------
describe('dtypes', () => {
  // h: float16 [N,3], i: int64 [N], m: bool [N,3] -> four outputs of those dtypes.
  function mixed({ halfOp = 'Neg', intOp = 'Add', boolOp = 'Not' } = {}) {
    return onnx.model({
      nodes: [
        onnx.node(halfOp, ['h'], ['hn']),
        onnx.node(intOp, ['i', 'i'], ['i2']),
        onnx.node(boolOp, ['m'], ['mn']),
        onnx.node('Where', ['m', 'h', 'hn'], ['w']),
      ],
      inputs: [
        ['h', DT.FLOAT16, ['N', 3]],
        ['i', DT.INT64, ['N']],
        ['m', DT.BOOL, ['N', 3]],
      ],
      outputs: [
        ['hn', DT.FLOAT16, ['N', 3]],
        ['i2', DT.INT64, ['N']],
        ['mn', DT.BOOL, ['N', 3]],
        ['w', DT.FLOAT16, ['N', 3]],
      ],
    });
  }

  test('int64, bool and float16 inputs run and agree', () => {
    const a = write('mixed_a.onnx', mixed());
    const b = write('mixed_b.onnx', mixed());
    const r = runCli(a, b, '--bind', 'N=3,8');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(r.lines.length, 7);
  });

  test('int64 outputs are compared exactly', () => {
    const a = write('mixed_a.onnx', mixed());
    const b = write('mixed_mul.onnx', mixed({ intOp: 'Mul' }));
    // i in [0,4): i+i == i*i only for 0 and 2, so 8 elements surely include a 1 or 3.
    const r = runCli(a, b, '--seeds', '1', '--bind', 'N=8');
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.lines[0], /MISMATCH i2: \d+\/8 elements differ, first at \[\d+\]: A=\d+ B=\d+$/);
    assert.doesNotMatch(r.lines[0], /hn:|mn:|w:/);
  });

  test('float16 inputs carry random data: Neg vs Identity differs', () => {
    const a = write('mixed_a.onnx', mixed());
    const b = write('mixed_idh.onnx', mixed({ halfOp: 'Identity' }));
    const r = runCli(a, b, '--seeds', '1', '--bind', 'N=2');
    assert.equal(r.status, 1);
    // hn differs everywhere; w = Where(m, h, hn) also differs wherever m is false.
    assert.match(r.lines[0], /MISMATCH hn: 6\/6 elements differ, first at \[0,0\]: A=-?[\d.e-]+ B=-?[\d.e-]+/);
  });

  test('bool outputs are compared exactly', () => {
    const a = write('mixed_a.onnx', mixed());
    const b = write('mixed_id.onnx', mixed({ boolOp: 'Identity' }));
    const r = runCli(a, b, '--seeds', '1', '--bind', 'N=2');
    assert.equal(r.status, 1);
    assert.match(r.lines[0], /MISMATCH mn: 6\/6 elements differ, first at \[0,0\]: A=[01] B=[01]$/);
  });

  test('every other integer and float dtype can be fed', () => {
    const types = ['DOUBLE', 'INT8', 'INT16', 'INT32', 'UINT8', 'UINT16', 'UINT32', 'UINT64'];
    const m = onnx.model({
      nodes: types.map((t) => onnx.node('Identity', [`x_${t}`], [`y_${t}`])),
      inputs: types.map((t) => [`x_${t}`, DT[t], [2, 'N']]),
      outputs: types.map((t) => [`y_${t}`, DT[t], [2, 'N']]),
    });
    const a = write('alltypes.onnx', m);
    const r = runCli(a, a, '--seeds', '1', '--int-range', '1,3');
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  test('--int-range and --float-range bound the generated values', () => {
    const rng = equiv.mulberry32(1);
    const ints = equiv.randomTensor('int64', [1000], rng, { ...equiv.DEFAULTS, intRange: [-3, 2] }).data;
    assert.ok(ints instanceof BigInt64Array);
    const seen = new Set(Array.from(ints, Number));
    assert.deepEqual([...seen].sort(), [-1, -2, -3, 0, 1].sort());
    const def = equiv.randomTensor('int32', [1000], rng, equiv.DEFAULTS).data;
    assert.deepEqual([...new Set(def)].sort(), [0, 1, 2, 3]);
    const u8 = equiv.randomTensor('uint8', [100], rng, { ...equiv.DEFAULTS, intRange: [-5, 0] }).data;
    assert.ok(u8.every((v) => v === 0)); // clamped, not wrapped
    const fl = equiv.randomTensor('float64', [1000], rng, { ...equiv.DEFAULTS, floatRange: [10, 11] }).data;
    assert.ok(fl.every((v) => v >= 10 && v <= 11));
    const h = equiv.randomTensor('float16', [1000], rng, equiv.DEFAULTS).data;
    assert.ok(h instanceof Uint16Array);
    const hv = Array.from(h, equiv.halfToFloat);
    assert.ok(hv.every((v) => v >= -1 && v <= 1));
    assert.ok(new Set(hv).size > 500 && hv.some((v) => v < -0.5) && hv.some((v) => v > 0.5));
    const b = equiv.randomTensor('bool', [1000], rng, equiv.DEFAULTS).data;
    assert.deepEqual([...new Set(b)].sort(), [0, 1]);
  });

  test('the same seed gives the same inputs, another seed different ones', () => {
    const gen = (seed) =>
      Array.from(equiv.randomTensor('float32', [16], equiv.mulberry32(equiv.streamSeed(seed, 'X')), equiv.DEFAULTS).data);
    assert.deepEqual(gen(1), gen(1));
    assert.notDeepEqual(gen(1), gen(2));
  });

  test('float32 -> float16 conversion rounds to nearest even', () => {
    const cases = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.5, 0x3800],
      [65504, 0x7bff], // largest half
      [65520, 0x7c00], // rounds up to infinity
      [1e6, 0x7c00],
      [-Infinity, 0xfc00],
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -25, 0x0000], // halfway to it: ties to even (0)
      [3 * 2 ** -25, 0x0002], // halfway between 1 and 2 subnormal steps: even (2)
      [2 ** -14, 0x0400], // smallest normal
      [1 + 2 ** -11, 0x3c00], // halfway between 1 and next: even (1)
      [1 + 3 * 2 ** -11, 0x3c02], // halfway between 0x3c01 and 0x3c02: even
      [0.1, 0x2e66],
    ];
    for (const [v, bits] of cases) assert.equal(equiv.floatToHalf(v), bits, `floatToHalf(${v})`);
    assert.equal(equiv.floatToHalf(NaN) & 0x7c00, 0x7c00);
    assert.notEqual(equiv.floatToHalf(NaN) & 0x3ff, 0);
    for (const bits of [0x0001, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0x7bff, 0xc000, 0x2e66]) {
      assert.equal(equiv.floatToHalf(equiv.halfToFloat(bits)), bits, `round trip ${bits.toString(16)}`);
    }
    assert.equal(equiv.halfToFloat(0x7c00), Infinity);
    assert.ok(Number.isNaN(equiv.halfToFloat(0x7e00)));
  });
});

// ---------------------------------------------------------------------------------------
describe('comparison rules', () => {
  const t = (type, data, dims = [data.length]) => ({ type, data, dims });

  test('NaN equals NaN; infinities equal only with the same sign', () => {
    const f = (xs) => Float32Array.from(xs);
    assert.equal(equiv.compareTensors(t('float32', f([NaN, 1])), t('float32', f([NaN, 1]))).ok, true);
    assert.equal(equiv.compareTensors(t('float32', f([Infinity])), t('float32', f([Infinity]))).ok, true);
    assert.equal(equiv.compareTensors(t('float32', f([Infinity])), t('float32', f([-Infinity]))).ok, false);
    assert.equal(equiv.compareTensors(t('float32', f([NaN])), t('float32', f([0]))).ok, false);
    assert.equal(equiv.compareTensors(t('float32', f([1])), t('float32', f([Infinity]))).ok, false);
  });

  test('per-dtype tolerances, overridable', () => {
    const d = (type, a, b, tol) =>
      equiv.compareTensors(t(type, Float64Array.of(a)), t(type, Float64Array.of(b)), tol).ok;
    assert.equal(d('float32', 1, 1 + 5e-5), true);
    assert.equal(d('float32', 1, 1 + 5e-4), false);
    assert.equal(d('float64', 1, 1 + 5e-10), true);
    assert.equal(d('float64', 1, 1 + 5e-8), false);
    assert.equal(d('float32', 0, 2e-5), false); // atol 1e-5
    assert.equal(d('float32', 1, 1 + 5e-4, { rtol: 1e-3 }), true);
    // float16 data arrives as bits.
    const h = (x) => Uint16Array.of(equiv.floatToHalf(x));
    assert.equal(equiv.compareTensors(t('float16', h(1)), t('float16', h(1.005))).ok, true);
    assert.equal(equiv.compareTensors(t('float16', h(1)), t('float16', h(1.05))).ok, false);
  });

  test('ints exact; dtype and shape must match', () => {
    const big = equiv.compareTensors(t('int64', BigInt64Array.of(1n, 2n)), t('int64', BigInt64Array.of(1n, 3n)));
    assert.equal(big.ok, false);
    assert.deepEqual(big.first, { flat: 1, index: [1], a: 2n, b: 3n });
    assert.equal(big.detail, '1/2 elements differ, first at [1]: A=2 B=3');
    const dt = equiv.compareTensors(t('float32', Float32Array.of(1)), t('float64', Float64Array.of(1)));
    assert.deepEqual([dt.ok, dt.detail], [false, 'dtype float32 vs float64']);
    const sh = equiv.compareTensors(t('int32', Int32Array.of(1, 2), [2]), t('int32', Int32Array.of(1, 2), [1, 2]));
    assert.deepEqual([sh.ok, sh.detail], [false, 'shape [2] vs [1,2]']);
    const multi = equiv.compareTensors(
      t('int32', Int32Array.of(0, 0, 0, 0, 0, 0), [2, 3]),
      t('int32', Int32Array.of(0, 0, 0, 0, 9, 0), [2, 3]),
    );
    assert.deepEqual(multi.first.index, [1, 1]);
  });

  test('NaNs produced by both models agree end to end', async () => {
    const m = onnx.model({
      nodes: [onnx.node('Sqrt', ['X'], ['Y'])],
      inputs: [['X', DT.FLOAT, [4, 4]]],
      outputs: [['Y', DT.FLOAT, [4, 4]]],
    });
    const a = write('sqrt.onnx', m);
    const res = await equiv.compareModels(a, a, { seeds: [1] });
    assert.equal(res.ok, true);
    // Inputs in [-1, 1) give negative values, so some outputs are NaN.
    const ort = require(path.join(EQUIV_DIR, 'node_modules', 'onnxruntime-node'));
    const s = await ort.InferenceSession.create(a);
    const X = equiv.randomTensor('float32', [4, 4], equiv.mulberry32(equiv.streamSeed(1, 'X')), equiv.DEFAULTS);
    const out = await s.run({ X: new ort.Tensor('float32', X.data, X.dims) });
    assert.ok(Array.from(out.Y.data).some(Number.isNaN));
    await s.release();
  });

  test('output dtype, shape, name and input signature differences are MISMATCHes', () => {
    const base = onnx.model({
      nodes: [onnx.node('Identity', ['X'], ['Y'])],
      inputs: [['X', DT.FLOAT, [2, 3]]],
      outputs: [['Y', DT.FLOAT, [2, 3]]],
    });
    const a = write('id.onnx', base);

    const cast = onnx.model({
      nodes: [onnx.node('Cast', ['X'], ['Y'], { to: DT.DOUBLE })],
      inputs: [['X', DT.FLOAT, [2, 3]]],
      outputs: [['Y', DT.DOUBLE, [2, 3]]],
    });
    let r = runCli(a, write('cast.onnx', cast), '--seeds', '1');
    assert.equal(r.status, 1);
    assert.equal(r.lines[0], 'seed=1: MISMATCH Y: dtype float32 vs float64');

    const unsq = onnx.model({
      nodes: [onnx.node('Unsqueeze', ['X', 'axes'], ['Y'])],
      inputs: [['X', DT.FLOAT, [2, 3]]],
      outputs: [['Y', DT.FLOAT, [1, 2, 3]]],
      initializers: [{ name: 'axes', dataType: DT.INT64, dims: [1], int64Data: [0] }],
    });
    r = runCli(a, write('unsq.onnx', unsq), '--seeds', '1');
    assert.equal(r.status, 1);
    assert.equal(r.lines[0], 'seed=1: MISMATCH Y: shape [2,3] vs [1,2,3]');

    const renamed = onnx.model({
      nodes: [onnx.node('Identity', ['X'], ['Z'])],
      inputs: [['X', DT.FLOAT, [2, 3]]],
      outputs: [['Z', DT.FLOAT, [2, 3]]],
    });
    r = runCli(a, write('renamed.onnx', renamed), '--seeds', '1');
    assert.equal(r.status, 1);
    assert.equal(r.lines[0], 'seed=1: MISMATCH outputs (Y) vs (Z)');

    const otherInput = onnx.model({
      nodes: [onnx.node('Identity', ['X'], ['Y'])],
      inputs: [['X', DT.DOUBLE, [2, 3]]],
      outputs: [['Y', DT.DOUBLE, [2, 3]]],
    });
    r = runCli(a, write('dbl.onnx', otherInput), '--seeds', '1');
    assert.equal(r.status, 1);
    assert.match(r.lines[0], /^equiv: MISMATCH .*: input X dtype float32 vs float64/);
  });

  test('--quiet prints only the final line', () => {
    const a = write('add.onnx', binary('Add'));
    const b = write('sub.onnx', binary('Sub'));
    let r = runCli(a, b, '--quiet');
    assert.equal(r.status, 1);
    assert.equal(r.lines.length, 1);
    assert.match(r.lines[0], /^equiv: MISMATCH .* 3 of 3 runs differ; first: seed=1: Y: /);
    r = runCli(a, a, '--quiet');
    assert.equal(r.status, 0);
    assert.equal(r.lines.length, 1);
  });
});

// ---------------------------------------------------------------------------------------
// Y = MatMul(X0, X1) / C, X0 [4,16,16] and X1 [4,16,16] float32, C = sqrt(8) (as LLaMA's
// attention scales its scores). `reshaped` puts a Reshape to the same shape between the
// MatMul and the Div, as a bmm between views does: ONNX Runtime's optimizer then leaves
// the Div alone, while without it it makes the two one FusedMatMul scaled by the float32
// reciprocal of C, which rounds differently.
function scaledMatMul({ reshaped = false, scale = Math.SQRT2 * 2 } = {}) {
  const dims = [4, 16, 16];
  const nodes = reshaped
    ? [onnx.node('MatMul', ['X0', 'X1'], ['P']), onnx.node('Reshape', ['P', 'S'], ['R']), onnx.node('Div', ['R', 'C'], ['Y'])]
    : [onnx.node('MatMul', ['X0', 'X1'], ['P']), onnx.node('Div', ['P', 'C'], ['Y'])];
  const initializers = [{ name: 'C', dataType: DT.FLOAT, dims: [], floatData: [scale] }];
  if (reshaped) initializers.push({ name: 'S', dataType: DT.INT64, dims: [3], int64Data: dims });
  return onnx.model({
    nodes,
    inputs: [
      ['X0', DT.FLOAT, dims],
      ['X1', DT.FLOAT, dims],
    ],
    outputs: [['Y', DT.FLOAT, dims]],
    initializers,
  });
}

describe('differences of ONNX Runtime\'s graph optimizations', () => {
  test('outputs that differ only with the optimizations agree, and the lines say by how much', async () => {
    const a = write('scaled_reshaped.onnx', scaledMatMul({ reshaped: true }));
    const b = write('scaled.onnx', scaledMatMul());
    // Bit for bit, without the optimizations: the two graphs compute the same.
    assert.equal(runCli(a, b, '--seeds', '1,2', '--rtol', '0', '--atol', '0', '--no-optimize').status, 0);
    const r = runCli(a, b, '--seeds', '1,2', '--rtol', '0', '--atol', '0');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.lines[0], /^seed=1: OK \(differ only with ONNX Runtime's graph optimizations: Y: \d+\/1024 elements differ/);
    assert.match(r.lines[2], /: 2 runs agree \(2 only without ONNX Runtime's graph optimizations\)$/);
    const res = await equiv.compareModels(a, b, { seeds: [1], rtol: 0, atol: 0 });
    assert.equal(res.ok, true);
    assert.match(res.runs[0].runtimeOnly, /^Y: /);
    // Guard against a vacuous pass: with the optimizations, the outputs do differ.
    assert.ok(res.runs[0].outputs[0].mismatches > 0);
  });

  test('a difference that stays without the optimizations is a MISMATCH', () => {
    const a = write('scaled_reshaped.onnx', scaledMatMul({ reshaped: true }));
    const b = write('scaled_other.onnx', scaledMatMul({ scale: 2.83 }));
    const r = runCli(a, b, '--seeds', '1');
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.lines[0], /^seed=1: MISMATCH Y: /);
  });
});

// ---------------------------------------------------------------------------------------
describe('errors exit 2 with one line', () => {
  const oneLineError = (r, file) => {
    assert.equal(r.status, 2, r.stdout + r.stderr);
    const lines = r.stderr.split('\n').filter(Boolean);
    assert.equal(lines.length, 1, r.stderr);
    assert.ok(lines[0].startsWith('equiv: error: '), lines[0]);
    assert.ok(lines[0].includes(file), lines[0]);
    assert.equal(r.stdout, '');
  };

  test('missing file', () => {
    const a = write('ok.onnx', binary('Add'));
    const missing = path.join(tmp, 'does_not_exist.onnx');
    oneLineError(runCli(a, missing), missing);
  });

  test('garbage file', () => {
    const a = write('ok.onnx', binary('Add'));
    const junk = write('junk.onnx', Buffer.from('this is not an ONNX model\n\x00\xff\xfe'));
    oneLineError(runCli(junk, a), junk);
  });

  test('a model ORT cannot load (unknown op)', () => {
    const a = write('ok.onnx', binary('Add'));
    const bad = write('badop.onnx', binary('NoSuchOp'));
    oneLineError(runCli(a, bad), bad);
  });

  test('a model that fails at run time', () => {
    // Reshape X [N,3] to [4,3]: loads, but fails unless N == 4.
    const m = onnx.model({
      nodes: [onnx.node('Reshape', ['X', 's'], ['Y'])],
      inputs: [['X', DT.FLOAT, ['N', 3]]],
      outputs: [['Y', DT.FLOAT, [4, 3]]],
      initializers: [{ name: 's', dataType: DT.INT64, dims: [2], int64Data: [4, 3] }],
    });
    const a = write('reshape.onnx', m);
    assert.equal(runCli(a, a, '--bind', 'N=4', '--seeds', '1').status, 0);
    const r = runCli(a, a, '--bind', 'N=4,5', '--seeds', '1');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^equiv: error: .*reshape\.onnx: run failed \(seed=1 N=5\): .+\n$/);
  });

  test('usage errors', () => {
    const a = write('ok.onnx', binary('Add'));
    for (const args of [
      [a],
      [a, a, '--seeds', 'x'],
      [a, a, '--bind', 'N'],
      [a, a, '--frobnicate'],
      [a, a, '--rtol'],
      [a, a, '--values', 'X0'],
      [a, a, '--values', 'X0=1,,2'],
      [a, a, '--values', 'X0=1,infinite'],
    ]) {
      const r = runCli(...args);
      assert.equal(r.status, 2, args.join(' '));
      assert.match(r.stderr, /^equiv: .*\nusage: /);
    }
  });
});

// ---------------------------------------------------------------------------------------
describe('chosen values and exact comparison', () => {
  // Y = Cast<float16>(Cast<float>(X)) and Z = Cast<float>(Cast<double>(F)), or their
  // inputs, X float16 [8] and F float32 [8].
  function roundTrips(op) {
    const nodes =
      op === 'Cast'
        ? [
            onnx.node('Cast', ['X'], ['XF'], { to: DT.FLOAT }),
            onnx.node('Cast', ['XF'], ['Y'], { to: DT.FLOAT16 }),
            onnx.node('Cast', ['F'], ['FD'], { to: DT.DOUBLE }),
            onnx.node('Cast', ['FD'], ['Z'], { to: DT.FLOAT }),
          ]
        : [onnx.node(op, ['X'], ['Y']), onnx.node(op, ['F'], ['Z'])];
    return onnx.model({
      nodes,
      inputs: [
        ['X', DT.FLOAT16, [8]],
        ['F', DT.FLOAT, [8]],
      ],
      outputs: [
        ['Y', DT.FLOAT16, [8]],
        ['Z', DT.FLOAT, [8]],
      ],
    });
  }
  const HALF = 'X=5.960464477539063e-8,-5.960464477539063e-8,6.097555160522461e-05,-0,inf,-inf,nan,65504';
  const FLOAT = 'F=1e-45,-1e-45,1.1754942106924411e-38,-0,Infinity,-inf,NaN,1';

  test('--values feeds the values, repeated in order, in every run', () => {
    const h = equiv.chosenTensor('X', 'float16', [2, 5], [2 ** -24, -0, Infinity, NaN]);
    assert.deepEqual(Array.from(h.data), [0x0001, 0x8000, 0x7c00, h.data[3], 0x0001, 0x8000, 0x7c00, h.data[3], 0x0001, 0x8000]);
    assert.ok(Number.isNaN(equiv.halfToFloat(h.data[3])));
    const f = equiv.chosenTensor('F', 'float32', [3], [1e-45, -0]);
    assert.ok(Object.is(f.data[1], -0) && f.data[0] > 0 && f.data[2] === f.data[0]);
    assert.deepEqual(Array.from(equiv.chosenTensor('I', 'int64', [3], [-5, 7]).data), [-5n, 7n, -5n]);
    assert.deepEqual(Array.from(equiv.chosenTensor('B', 'bool', [2], [1, 0]).data), [1, 0]);
    assert.throws(() => equiv.chosenTensor('I', 'int8', [2], [128]), /--values I: 128 is not a int8 value/);
    assert.throws(() => equiv.chosenTensor('I', 'int32', [2], [1.5]), /--values I: 1.5 is not a int32 value/);
    assert.throws(() => equiv.chosenTensor('X', 'float32', [2], [1, 2, 3]), /3 values for a tensor of 2 elements/);
  });

  test('--exact tells -0 from +0 and a flushed subnormal from the subnormal; NaN still equals NaN', () => {
    const t = (type, data) => ({ type, data, dims: [data.length] });
    const f = (xs) => Float32Array.from(xs);
    const exact = { exact: true };
    assert.equal(equiv.compareTensors(t('float32', f([-0])), t('float32', f([0]))).ok, true);
    assert.equal(equiv.compareTensors(t('float32', f([-0])), t('float32', f([0])), exact).ok, false);
    assert.equal(equiv.compareTensors(t('float32', f([1e-45])), t('float32', f([0])), exact).ok, false);
    assert.equal(equiv.compareTensors(t('float32', f([NaN, 1, -0])), t('float32', f([NaN, 1, -0])), exact).ok, true);
    const h = (bits) => Uint16Array.from(bits);
    // The smallest float16 subnormal against zero: within float16's tolerance, not exact.
    assert.equal(equiv.compareTensors(t('float16', h([0x0001])), t('float16', h([0x0000]))).ok, true);
    const sub = equiv.compareTensors(t('float16', h([0x0001])), t('float16', h([0x0000])), exact);
    assert.equal(sub.ok, false);
    assert.match(sub.detail, /^1\/1 elements differ, first at \[0\]: A=5.9605e-8 B=0 \(exact; /);
    assert.equal(equiv.compareTensors(t('float16', h([0x8000])), t('float16', h([0x0000])), exact).ok, false);
    assert.equal(equiv.compareTensors(t('float16', h([0x7e00])), t('float16', h([0x7c01])), exact).ok, true);
  });

  test('float16 -> float -> float16 and float -> double -> float keep every value on ONNX Runtime', () => {
    const a = write('round_trips.onnx', roundTrips('Cast'));
    const b = write('identities.onnx', roundTrips('Identity'));
    for (const extra of [[], ['--no-optimize']]) {
      const r = runCli(a, b, '--exact', '--values', HALF, '--values', FLOAT, ...extra);
      assert.equal(r.status, 0, r.stdout + r.stderr);
    }
    // The same values make Abs differ from Identity (on -0, the negative subnormals and -inf).
    const c = write('abs.onnx', roundTrips('Abs'));
    const r = runCli(a, c, '--seeds', '1', '--exact', '--values', HALF, '--values', FLOAT);
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.lines[0], /MISMATCH Y: 3\/8 elements differ, first at \[1\]: A=-5.9605e-8 B=5.9605e-8 \(exact; /);
  });

  test('--values of an input the models lack is an error', () => {
    const a = write('round_trips.onnx', roundTrips('Cast'));
    const r = runCli(a, a, '--values', 'W=1');
    assert.equal(r.status, 2);
    assert.match(r.stderr, /^equiv: error: --values W: the models have no input of that name\n$/);
  });
});

// ---------------------------------------------------------------------------------------
describe('protobuf decoder', () => {
  test('reads inputs, outputs, dims and skips initialized inputs', () => {
    const bytes = onnx.model({
      nodes: [onnx.node('Add', ['X', 'C'], ['Y'])],
      inputs: [
        ['X', DT.FLOAT, ['batch', 3, null]],
        ['C', DT.FLOAT, [1]],
        ['R', DT.INT64, null],
      ],
      outputs: [['Y', DT.FLOAT, ['batch', 3, null]]],
      initializers: [{ name: 'C', dataType: DT.FLOAT, dims: [1], floatData: [1] }],
      opset: 18,
    });
    const m = decodeModel(bytes);
    assert.equal(m.irVersion, 8);
    assert.deepEqual(m.opsetImports, [{ domain: '', version: 18 }]);
    assert.deepEqual(
      m.graph.inputs.map((i) => i.name),
      ['X', 'C', 'R'],
    );
    assert.deepEqual(
      m.feedInputs.map((i) => i.name),
      ['X', 'R'],
    );
    assert.deepEqual(m.feedInputs[0].type, {
      kind: 'tensor',
      elemType: 1,
      dtype: 'float32',
      shape: [{ param: 'batch' }, { value: 3 }, {}],
    });
    assert.equal(m.feedInputs[1].type.shape, null); // no shape: unknown rank
    assert.equal(m.feedInputs[1].type.dtype, 'int64');
    assert.deepEqual(m.graph.initializers, [{ name: 'C', elemType: 1, dtype: 'float32', dims: [1] }]);
    assert.deepEqual(
      m.graph.outputs.map((o) => o.name),
      ['Y'],
    );
  });

  test('packed and unpacked repeated varints, fixed32/64 and groups', () => {
    const unpackedDims = Buffer.concat([pb.varint(1, 2), pb.varint(1, 5), pb.varint(2, DT.FLOAT), pb.string(8, 'T')]);
    const packedDims = Buffer.concat([pb.packedVarints(1, [2, 5]), pb.varint(2, DT.FLOAT), pb.string(8, 'T')]);
    // Unknown fields of every wire type in the graph and model must be skipped.
    const noise = [
      pb.fixed32(90, 0xdeadbeef),
      pb.fixed64(91),
      pb.group(92, [pb.varint(1, 3), pb.group(2, [pb.string(1, 'nested')])]),
      pb.varint(93, -1n),
      pb.string(94, 'ignored'),
    ];
    for (const t of [unpackedDims, packedDims]) {
      const graph = Buffer.concat([
        ...noise,
        pb.bytes(5, t),
        pb.bytes(11, onnx.valueInfo('X', DT.FLOAT, [7])),
        pb.bytes(11, onnx.valueInfo('T', DT.FLOAT, [2, 5])),
        pb.bytes(12, onnx.valueInfo('Y', DT.FLOAT, [7])),
      ]);
      const model = Buffer.concat([...noise, pb.varint(1, 9), pb.bytes(7, graph)]);
      const m = decodeModel(model);
      assert.deepEqual(m.graph.initializers[0].dims, [2, 5]);
      assert.deepEqual(
        m.feedInputs.map((i) => i.name),
        ['X'],
      );
      assert.equal(m.irVersion, 9);
    }
  });

  test('malformed data throws', () => {
    const good = onnx.model({
      nodes: [onnx.node('Relu', ['X'], ['Y'])],
      inputs: [['X', DT.FLOAT, [2]]],
      outputs: [['Y', DT.FLOAT, [2]]],
    });
    assert.throws(() => decodeModel(good.subarray(0, good.length - 3)), /runs past the end|truncated/);
    assert.throws(() => decodeModel(Buffer.from([0x08, 0x80])), /truncated varint/);
    assert.throws(() => decodeModel(pb.varint(1, 8)), /no graph/);
    assert.throws(() => decodeModel(Buffer.from([0x0b, 0x08, 0x01])), /unterminated group/);
    assert.throws(() => decodeModel(Buffer.from([0x0e])), /unknown wire type 6/);
  });

  test('lists the inputs of a real corpus model', () => {
    assert.ok(fs.existsSync(GEMMGELU), `corpus file missing: ${GEMMGELU} (it comes with the repository: tests/data/corpus, or set SHAPEPROP_CORPUS_DIR)`);
    const m = decodeModel(fs.readFileSync(GEMMGELU));
    const sig = m.feedInputs.map((i) => `${i.name}:${i.type.dtype}${JSON.stringify(i.type.shape.map((d) => d.value))}`);
    assert.deepEqual(sig, ['A:float32[2048,16]', 'W:float32[16,4096]', 'Bias:float32[4096]']);
    assert.deepEqual(
      m.graph.outputs.map((o) => o.name),
      ['Y'],
    );
  });
});

test('a real corpus model is equivalent to itself', () => {
  assert.ok(fs.existsSync(GEMMGELU), `corpus file missing: ${GEMMGELU} (it comes with the repository: tests/data/corpus, or set SHAPEPROP_CORPUS_DIR)`);
  const r = runCli(GEMMGELU, GEMMGELU, '--seeds', '1,2');
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.deepEqual(r.lines.slice(0, 2), ['seed=1: OK', 'seed=2: OK']);
});

test('SHAPEPROP_ORT=1.31 runs onnxruntime-node 1.31.1, installed beside 1.30', () => {
  const version = (env) => {
    const r = spawnSync(
      process.execPath,
      ['-e', `process.stdout.write(require(${JSON.stringify(EQUIV)}).loadOrt().env.versions.node)`],
      { encoding: 'utf8', env: { ...process.env, ...env } },
    );
    assert.equal(r.status, 0, r.stderr);
    return r.stdout;
  };
  assert.equal(version({ SHAPEPROP_ORT: '1.31' }), '1.31.1');
  assert.match(version({ SHAPEPROP_ORT: '' }), /^1\.30\./);  // unset or empty: package.json's onnxruntime-node
});

test('an oracle run leaves nothing of ORT telemetry behind, unless the caller turns it on', () => {
  // A fresh HOME and TMPDIR per run: onnxruntime-node 1.30's telemetry writes a log in
  // TMPDIR and a device id and event store under HOME/.cache/Microsoft. Whether it writes
  // them with telemetry on depends on the machine (CI's did not), so the test also reads
  // the setting the library saw: a preloaded hook records ORT_DISABLE_TELEMETRY as it is
  // when the oracle's process exits, after every session was made.
  const run = (telemetryVar) => {
    const root = fs.mkdtempSync(path.join(tmp, 'telemetry-'));
    const home = path.join(root, 'home');
    const tmpdir = path.join(root, 'tmp');
    fs.mkdirSync(home);
    fs.mkdirSync(tmpdir);
    const seen = path.join(root, 'seen');
    const hook = path.join(root, 'hook.js');
    fs.writeFileSync(hook, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(seen)}, String(process.env.ORT_DISABLE_TELEMETRY)));\n`);
    const env = { ...process.env, HOME: home, TMPDIR: tmpdir };
    delete env.ORT_DISABLE_TELEMETRY;
    if (telemetryVar !== undefined) env.ORT_DISABLE_TELEMETRY = telemetryVar;
    const r = spawnSync(process.execPath, ['-r', hook, EQUIV, GEMMGELU, GEMMGELU, '--seeds', '1'], { encoding: 'utf8', env, timeout: 120000 });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    return { left: [...fs.readdirSync(home), ...fs.readdirSync(tmpdir)], seen: fs.readFileSync(seen, 'utf8') };
  };
  const off = run(undefined);
  assert.equal(off.seen, '1');
  assert.deepEqual(off.left, []);
  // The caller's own setting wins.
  assert.equal(run('0').seen, '0');
  assert.equal(run('1').seen, '1');
});
