#!/usr/bin/env node
'use strict';
// One opset-23 real export (tests/data/real-exports/opset23) lowered for backends (issue
// 42), as ctest realexports.lowering.<model> runs it:
//
//   node lowering.js TOOL MODEL.onnx
//
// Two lowerings, each through `TOOL --mode inline ... --verify-full-check --verify-idempotent`
// (exit 0: ONNX's full checker passes the output at the opset it imports, and a second run
// changes nothing):
//   expand-ops     --expand-ops Attention: no Attention node is left;
//   target-opset   --target-opset 20: no Attention node is left, and the output imports
//                  ai.onnx opset 20;
// and each must compute, on ONNX Runtime, the outputs the original model computes there at
// two bindings of (batch, seq) (BINDINGS below, per model): input ids random, the
// attention mask ones but for the last two positions of the first row (padding), so that
// no row of a causal mask is masked entirely (ONNX's Attention body gives NaN there, where
// ONNX Runtime's kernel gives 0).
//
// With an ONNX older than opset 23 (the onnx117 configuration), the model must instead be
// refused: exit 2 and one line naming the ONNX it needs.
// Prints "PASS NAME" or "FAIL NAME: why" per check and "N passed, M failed"; exits 1 when a
// check fails, 2 on a usage error.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const equiv = require('../../tools/equiv/equiv');

// ONNX Runtime 1.30's RotaryEmbedding kernel wants cos/sin caches of the input's batch
// size, and torch writes them of batch 1 (Mistral's position ids): the original runs on
// it at batch 1 only. ONNX's body broadcasts them, so the lowered model runs at any batch.
const BINDINGS = {
  mistral: [{ batch: 1, seq: 8 }, { batch: 1, seq: 5 }],
  default: [{ batch: 2, seq: 8 }, { batch: 3, seq: 5 }],
};

let passed = 0;
let failed = 0;
function report(name, problem) {
  if (problem) {
    failed += 1;
    console.log(`FAIL ${name}: ${problem}`);
  } else {
    passed += 1;
    console.log(`PASS ${name}`);
  }
}

function run(tool, args) {
  const done = spawnSync(tool, args, { encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: done.status, stdout: done.stdout, stderr: done.stderr };
}

// A deterministic generator (mulberry32), for the input ids.
function generator(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function feeds(ort, inputs, binding, seed) {
  const next = generator(seed);
  const out = {};
  for (const vi of inputs) {
    const dims = vi.type.shape.map((d) => (d.value !== undefined ? Number(d.value) : binding[d.param]));
    if (dims.some((d) => d === undefined)) throw new Error(`input ${vi.name}: a dim no binding gives`);
    const n = dims.reduce((a, b) => a * b, 1);
    const data = new BigInt64Array(n);
    if (/mask/.test(vi.name)) {
      data.fill(1n);
      for (let j = Math.max(0, dims[1] - 2); j < dims[1]; ++j) data[j] = 0n;
    } else {
      for (let i = 0; i < n; ++i) data[i] = BigInt(Math.floor(next() * 128));
    }
    out[vi.name] = new ort.Tensor('int64', data, dims);
  }
  return out;
}

async function sameOutputs(original, lowered, bindings) {
  const A = await equiv.loadModel(original);
  const B = await equiv.loadModel(lowered);
  try {
    const ort = equiv.loadOrt();
    const problems = [];
    for (const [i, binding] of bindings.entries()) {
      const f = feeds(ort, A.signature.inputs, binding, 7 + i);
      const outA = await A.session.run(f);
      const outB = await B.session.run(f);
      for (const vi of A.signature.outputs) {
        const cmp = equiv.compareTensors(outA[vi.name], outB[vi.name]);
        if (!cmp.ok) problems.push(`${JSON.stringify(binding)} ${vi.name}: ${cmp.detail}`);
      }
    }
    return problems.join('; ');
  } finally {
    await A.session.release();
    await B.session.release();
  }
}

async function main(argv) {
  if (argv.length !== 2) {
    console.error('usage: node lowering.js TOOL MODEL.onnx');
    return 2;
  }
  const [tool, model] = argv;
  const name = path.basename(model).split('.')[0];
  const version = run(tool, ['--version']).stdout;
  const opset = Number((/ai\.onnx opsets up to (\d+)/.exec(version) || [])[1]);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lowering-'));
  try {
    if (opset < 23) {
      const done = run(tool, [model, '--mode', 'inline', '--expand-ops', 'Attention', '-o', path.join(work, 'x.onnx')]);
      const lines = done.stderr.trim().split('\n');
      report('refused', done.status === 2 && lines.length === 1 && /needs ONNX 1\.\d+ or newer/.test(lines[0])
        ? '' : `exit ${done.status}: ${done.stderr.trim()}`);
      return failed ? 1 : 0;
    }
    const ways = [['expand-ops', ['--expand-ops', 'Attention']], ['target-opset', ['--target-opset', '20']]];
    for (const [way, options] of ways) {
      const out = path.join(work, `${way}.onnx`);
      const done = run(tool, [model, '--mode', 'inline', ...options, '--verify-full-check', '--verify-idempotent', '-q', '-o', out]);
      if (done.status !== 0) {
        report(way, `exit ${done.status}: ${done.stderr.trim()}`);
        continue;
      }
      const text = run(tool, [out, '--no-infer', '--emit', 'text']).stdout;
      const problems = [];
      if (/ = Attention /.test(text)) problems.push('an Attention node is left');
      if (way === 'target-opset' && !/opset_import: \["" : 20[,\]]/.test(text)) problems.push('the output does not import opset 20');
      report(way, problems.join('; '));
      report(`${way} equal`, await sameOutputs(model, out, BINDINGS[name] || BINDINGS.default));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log(`${passed} passed, ${failed} failed`);
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
  console.error(`lowering: ${e.stack || e}`);
  process.exit(2);
});
