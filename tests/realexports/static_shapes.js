#!/usr/bin/env node
'use strict';
// One model of the real-export corpus with every symbolic input dim bound (issue 41), as
// ctest realexports.static.<model> runs it:
//
//   node static_shapes.js TOOL MODEL.onnx [OUT.onnx]
//
// The sizes come from static_bindings.json beside this file (by the model's name in
// origin.json; only the names the model's inputs carry), integer inputs' range from the
// model's folder's runs.json. `TOOL --mode inline --set-dim ...`
// must exit 0 and pass ONNX's full checker (--verify-full-check), and its output must:
//   no-shape-ops   hold no Shape or Size node, and no ConstantOfShape, Expand, Reshape or
//                  Range whose shape operands (or Range's operands) are not constants;
//   static-types   give every input, output and node output a fully static type (an
//                  element type and a number for every dim) in its inputs, outputs or
//                  value_info, and hold no function; but for values whose size depends
//                  on the data (NonMaxSuppression's count, NonZero's), which no binding
//                  of the inputs fixes: the report lists each with that reason;
//   summary        say so ("every value static"), or that only such values stay dynamic;
//   ort-types      declare the types ONNX Runtime computes (tools/equiv/ort_types.js);
//   equal          compute what the model computes at those sizes on ONNX Runtime
//                  (tools/equiv/equiv.js).
// OUT.onnx, when given, keeps the output. Prints "PASS NAME" or "FAIL NAME: why" per
// check and "N passed, M failed"; exits 1 when a check fails, 2 on a usage error.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const equiv = require('../../tools/equiv/equiv');
const types = require('../../tools/equiv/ort_types');
const { decodeModel, forEachField } = require('../../tools/equiv/onnx_proto');

const LEN = 2;
const textDecoder = new TextDecoder('utf-8');
const str = (buf, [s, e]) => textDecoder.decode(buf.subarray(s, e));

// The main graph's nodes ({op, domain, inputs, outputs}), its initializers' names and the
// model's function count: what onnx_proto's decodeModel leaves out.
function graphNodes(buf) {
  const out = { nodes: [], initializers: new Set(), functions: 0 };
  forEachField(buf, 0, buf.length, (f, w, r) => {
    if (f === 25 && w === LEN) {
      r.bytes();
      out.functions += 1;
      return true;
    }
    if (f !== 7 || w !== LEN) return false;
    const [gs, ge] = r.bytes();
    forEachField(buf, gs, ge, (gf, gw, gr) => {
      if (gw !== LEN || (gf !== 1 && gf !== 5)) return false;
      const [s, e] = gr.bytes();
      if (gf === 5) {
        forEachField(buf, s, e, (tf, tw, tr) => {
          if (tf !== 8 || tw !== LEN) return false;
          out.initializers.add(str(buf, tr.bytes()));
          return true;
        });
        return true;
      }
      const node = { op: '', domain: '', inputs: [], outputs: [] };
      forEachField(buf, s, e, (nf, nw, nr) => {
        if (nw !== LEN) return false;
        if (nf === 1) node.inputs.push(str(buf, nr.bytes()));
        else if (nf === 2) node.outputs.push(str(buf, nr.bytes()));
        else if (nf === 4) node.op = str(buf, nr.bytes());
        else if (nf === 7) node.domain = str(buf, nr.bytes());
        else return false;
        return true;
      });
      out.nodes.push(node);
      return true;
    });
    return true;
  });
  return out;
}

function isStatic(type) {
  return Boolean(type && type.kind === 'tensor' && type.elemType !== 0 && type.shape &&
                 type.shape.every((d) => d.value !== undefined));
}

function typeText(type) {
  if (!type || type.kind !== 'tensor') return type ? type.kind : '?';
  if (!type.shape) return `${type.dtype}[?rank]`;
  return `${type.dtype}[${type.shape.map((d) => (d.value !== undefined ? d.value : d.param || '?')).join(',')}]`;
}

// Problems of the output's ops: shape ops left, and shape operands that are not constants.
function opProblems(g) {
  const constant = new Set(g.initializers);
  for (const n of g.nodes) if (n.op === 'Constant' && !n.domain) n.outputs.forEach((o) => constant.add(o));
  const shapeOperands = { ConstantOfShape: [0], Expand: [1], Reshape: [1], Range: [0, 1, 2] };
  const problems = [];
  for (const n of g.nodes) {
    if (n.domain && n.domain !== 'ai.onnx') continue;
    if (n.op === 'Shape' || n.op === 'Size') problems.push(`${n.op} '${n.outputs[0]}' is left`);
    for (const i of shapeOperands[n.op] || [])
      if (n.inputs[i] && !constant.has(n.inputs[i])) problems.push(`${n.op} '${n.outputs[0]}' takes '${n.inputs[i]}', no constant`);
  }
  return problems;
}

// `dataDependent`: values the report says stay dynamic because their size depends on the data.
function typeProblems(model, g, dataDependent = new Set()) {
  const declared = new Map();
  for (const vi of [...model.graph.inputs, ...model.graph.outputs, ...model.graph.valueInfo]) declared.set(vi.name, vi.type);
  const problems = [];
  if (g.functions) problems.push(`${g.functions} functions are left`);
  const values = [...model.feedInputs.map((vi) => vi.name), ...model.graph.outputs.map((vi) => vi.name)];
  for (const n of g.nodes) values.push(...n.outputs.filter((o) => o));
  for (const v of new Set(values))
    if (!isStatic(declared.get(v)) && !dataDependent.has(v)) problems.push(`'${v}' is ${declared.has(v) ? typeText(declared.get(v)) : 'untyped'}`);
  return problems;
}

function firstLine(text) {
  return String(text).split('\n').map((l) => l.trim()).find((l) => l !== '') || '(no message)';
}

async function main(argv) {
  if (argv.length < 2 || argv.length > 3) {
    process.stderr.write('usage: node static_shapes.js TOOL MODEL.onnx [OUT.onnx]\n');
    return 2;
  }
  const [tool, model, keep] = argv;
  const dir = path.dirname(path.resolve(model));
  const file = path.basename(model);
  const origin = JSON.parse(fs.readFileSync(path.join(dir, 'origin.json'), 'utf8')).files[file];
  if (!origin) throw new Error(`${file} is not in origin.json`);
  const sizes = JSON.parse(fs.readFileSync(path.join(__dirname, 'static_bindings.json'), 'utf8')).models[origin.model];
  if (!sizes) throw new Error(`static_bindings.json has no sizes for ${origin.model}`);
  const carried = new Set();
  for (const vi of decodeModel(fs.readFileSync(model)).feedInputs)
    for (const d of vi.type.shape || []) if (d.param !== undefined) carried.add(d.param);
  const bind = Object.fromEntries(Object.entries(sizes).filter(([k]) => carried.has(k)));
  const runs = JSON.parse(fs.readFileSync(path.join(dir, 'runs.json'), 'utf8'));
  const intRange = { ...runs.default, ...(runs.models[origin.model] || {}) }.int_range;
  const unbound = [...carried].filter((k) => !(k in bind));

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shapeprop-static-'));
  const out = keep || path.join(work, 'static.onnx');
  const reportFile = path.join(work, 'report.json');
  const results = [];
  const report = (name, problem) => {
    results.push({ name, problem });
    process.stdout.write(problem ? `FAIL ${name}: ${problem}\n` : `PASS ${name}\n`);
  };
  try {
    const setDim = Object.entries(bind).map(([k, v]) => `${k}=${v}`).join(',');
    process.stdout.write(`NOTE --set-dim ${setDim}${unbound.length ? ` (no size for ${unbound.join(', ')})` : ''}\n`);
    const args = ['--mode', 'inline', model, '-o', out, '--report', reportFile, '--verify-full-check', '-q'];
    if (setDim) args.push('--set-dim', setDim);
    const r = spawnSync(tool, args, { encoding: 'utf8', timeout: 300000, maxBuffer: 64 << 20 });
    if (r.status !== 0) {
      report('exit', `exit ${r.status === null ? r.signal : r.status}: ${firstLine(r.stderr || r.error)}`);
      return 1;
    }
    report('exit', unbound.length ? `no size for ${unbound.join(', ')} in static_bindings.json` : '');
    const bytes = fs.readFileSync(out);
    const decoded = decodeModel(bytes);
    const g = graphNodes(bytes);
    const ops = opProblems(g);
    report('no-shape-ops', ops.length ? `${ops.length} problems; first: ${ops[0]}` : '');
    const rep = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
    const dynamic = (rep.dims && rep.dims.dynamic) || [];
    const fromData = dynamic.filter((d) => d.why === 'its size depends on the data');
    const dataDependent = new Set(fromData.map((d) => d.value));
    if (fromData.length) process.stdout.write(`NOTE ${fromData.length} values stay dynamic: their size depends on the data\n`);
    const typed = typeProblems(decoded, g, dataDependent);
    report('static-types', typed.length ? `${typed.length} values not static; first: ${typed[0]}` : '');
    const last = rep.summary[rep.summary.length - 1];
    const onlyData = fromData.length > 0 && fromData.length === dynamic.length && / stays? dynamic: /.test(last);
    const line = rep.summary.find((l) => l.startsWith('every value static')) || onlyData ? '' : `summary: ${last}`;
    report('summary', line || (dynamic.length > fromData.length ? 'the report lists dynamic values' : ''));
    try {
      const t = await types.checkTypes(out, { bind: {}, seed: 1, intRange });
      const problems = t.runs.flatMap((x) => x.problems);
      report('ort-types', t.ok ? '' : `${problems.length} false: ${problems[0]}`);
    } catch (e) {
      report('ort-types', `the type oracle failed: ${firstLine(e.message)}`);
    }
    try {
      const e = await equiv.compareModels(model, out, { bind: Object.fromEntries(Object.entries(bind).map(([k, v]) => [k, [v]])), seeds: [1], intRange });
      const bad = e.runs.find((x) => !x.ok);
      report('equal', e.ok ? '' : bad ? `${bad.label}: ${bad.detail}` : e.signatureDiffs.join('; '));
    } catch (err) {
      report('equal', `${err.file === out ? 'the output' : 'the model'} does not run: ${firstLine(err.message)}`);
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const failed = results.filter((x) => x.problem).length;
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  return failed ? 1 : 0;
}

module.exports = { graphNodes, opProblems, typeProblems };

if (require.main === module) equiv.runMain('static_shapes', main);
