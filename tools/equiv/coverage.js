#!/usr/bin/env node
'use strict';
// Coverage oracle: compares the types a model declares for its graph values (the outputs
// of the main graph's nodes; graph value_info and outputs, as onnx-infer-shapes writes
// them) with a baseline of what ONNX's InferShapes and ONNX Runtime's symbolic shape
// inference determine of the same model, each counting only its answers that are true
// against the shapes ONNX Runtime computes (tests/data/real-exports/baselines.py makes
// such a file; its format is in that script's header).
//
//   node tools/equiv/coverage.js MODEL.onnx BASELINES.json [--key NAME] [--quiet]
//
// Three checks, for ONNX's InferShapes and each symbolic tool the baselines hold (ORT's,
// onnx-shape-inference, OnnxSlim's): no value where one knows more (an element type, a rank, a
// dim's number, or that a dim is a symbol, where the model has less); when ORT's tool ran
// on the model, no dim it writes exactly (a number, or an expression of the inputs'
// symbols) that the model leaves unknown or fresh (dyn__N); and at least as many values
// fully determined (element type, rank and every dim a number or a symbol) as it truly
// determines. Whether the model's own
// types are true is ort_types.js's question, not this one's.
//
// --key names the model's entry in the baselines (default: MODEL's file name; a model
// written by onnx-infer-shapes keeps the name of what it came from through --key).
// Exit status: 0 both hold, 1 one does not, 2 usage error or unreadable input.

const fs = require('node:fs');
const path = require('node:path');
const { decodeModel } = require('./onnx_proto');
const { parseCommandLine, forEachArgument, runMain, EquivError } = require('./equiv');

const USAGE = `usage: node coverage.js MODEL.onnx BASELINES.json [options]
  --key NAME   the model's entry in BASELINES.json (default: MODEL's file name)
  --quiet      print only the final line
exit status: 0 covers the baselines, 1 does not, 2 usage error or unreadable input`;

function describeDims(dims) {
  return dims === null ? '(rank unknown)' : `[${dims.map((d) => (d === null ? '?' : d)).join(',')}]`;
}

// What the model says of one value, in the baselines' terms: [elemType, dims] with a dim a
// number, a symbol's text, or null for unknown (dims null: rank unknown); null if untyped.
function ours(type) {
  if (!type || type.kind !== 'tensor') return null;
  const dims = type.shape ? type.shape.map((d) => (d.value !== undefined ? d.value : d.param !== undefined ? d.param : null)) : null;
  return [type.elemType, dims];
}

function determined(t) {
  return t !== null && t[0] !== 0 && t[1] !== null && t[1].every((d) => d !== null);
}

// The symbolic tools the baselines may hold besides ONNX's InferShapes (baselines.py):
// key -> name in messages.
const PEERS = {
  ort: "ONNX Runtime's symbolic inference",
  osi: 'onnx-shape-inference',
  onnxslim: "OnnxSlim's shape inference",
};

// Where a tool's typing of a value (ONNX's InferShapes by default) says more than ours: a
// message, or '' when it does not.
function knowsMore(name, theirs, mine, tool = "ONNX's InferShapes") {
  const [elem, dims] = theirs;
  const said = `${tool} types it elem ${elem} ${describeDims(dims)}`;
  if (mine === null) return `${name}: ${said}, the model leaves it untyped`;
  if (elem !== 0 && mine[0] !== elem) return `${name}: ${said}, the model says elem ${mine[0]}`;
  if (dims === null) return '';
  if (mine[1] === null) return `${name}: ${said}, the model has no rank`;
  if (mine[1].length !== dims.length) return `${name}: ${said}, the model says ${describeDims(mine[1])}`;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i];
    const m = mine[1][i];
    if (d === null) continue;
    // A symbol of theirs needs a number or a symbol (any: symbols are named per tool).
    if (typeof d === 'string' ? m === null : m !== d) return `${name}: ${said}, the model says ${describeDims(mine[1])} (dim ${i})`;
  }
  return '';
}

// `excused`: per peer key, the values whose "knows more" problems are known and accepted
// for this model ({ onnxslim: ['arange', ...] }: tests/realexports/peer_exceptions.json
// says why); their problems go into the result's `excused` ("peer:value") instead.
function compareCoverage(modelFile, baselinesFile, key, excused = {}) {
  let model;
  let baselines;
  try {
    model = decodeModel(fs.readFileSync(modelFile));
  } catch (e) {
    throw new EquivError(`cannot read the model: ${e.message}`, modelFile);
  }
  try {
    baselines = JSON.parse(fs.readFileSync(baselinesFile, 'utf8'));
  } catch (e) {
    throw new EquivError(`cannot read the baselines: ${e.message}`, baselinesFile);
  }
  const entry = baselines.models && baselines.models[key];
  if (!entry) throw new EquivError(`no baseline for '${key}'`, baselinesFile);
  const g = model.graph;
  const types = new Map();
  for (const vi of [...g.valueInfo, ...g.outputs]) if (vi.type.kind !== 'none' && !types.has(vi.name)) types.set(vi.name, vi.type);
  const values = g.nodeOutputs.filter((n) => n !== '');
  const mine = new Map(values.map((v) => [v, ours(types.get(v))]));
  const problems = [];
  for (const v of values) {
    const theirs = entry.onnx.typed[v];
    if (!theirs) continue;
    const p = knowsMore(v, theirs, mine.get(v));
    if (p) problems.push(p);
  }
  const count = values.filter((v) => determined(mine.get(v))).length;
  const symbols = new Set();
  for (const vi of g.inputs)
    if (vi.type.kind === 'tensor' && vi.type.shape) for (const d of vi.type.shape) if (d.param !== undefined) symbols.add(d.param);
  // The symbolic tools: what each types truly must not be more precise than ours, in its
  // kind (a type, a rank, a number, a symbol) or its exactness (a number or an expression of
  // the inputs' symbols where ours is unknown or fresh); nor may it determine more values.
  const excusedSeen = [];
  for (const [peerKey, tool] of Object.entries(PEERS)) {
    const peer = entry[peerKey];
    if (!peer || !peer.ran) continue;
    const accepted = new Set(excused[peerKey] || []);
    for (const v of values) {
      const theirs = peer.typed && peer.typed[v];
      if (!theirs) continue;
      const p = symbolicKnowsMore(v, theirs, mine.get(v), symbols, tool) || knowsMore(v, theirs, mine.get(v), tool);
      if (p && accepted.has(v)) excusedSeen.push(`${peerKey}:${v}`);
      else if (p) problems.push(p);
    }
    if (count + accepted.size < peer.determined) {
      const missing = peer.determined_values.filter((v) => mine.has(v) && !determined(mine.get(v)));
      problems.push(
        `${count} values fully determined, fewer than ${tool}'s ${peer.determined}` +
          (missing.length ? ` (it determines ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''})` : ''),
      );
    }
  }
  const ort = entry.ort;
  const peers = Object.fromEntries(Object.keys(PEERS).filter((k) => entry[k]).map((k) => [k, entry[k]]));
  return { ok: problems.length === 0, problems, excused: excusedSeen, values: values.length, determined: count,
    onnx: entry.onnx.determined, ort, peers };
}

// A dim text of ORT's that is an expression of the graph inputs' symbols ("floor(height/2 -
// 1/2) + 1", "seq", "2*batch"): every name in it is an input's symbol or a function sympy
// writes. ORT's own fresh names (unk__0, and the like) are not.
const SYMPY_FUNCTIONS = new Set(['floor', 'ceiling', 'Min', 'Max', 'Mod', 'min', 'max', 'mod']);
function isExpressionOf(text, symbols) {
  const names = text.match(/[A-Za-z_][A-Za-z0-9_]*/g) || [];
  return names.every((n) => symbols.has(n) || SYMPY_FUNCTIONS.has(n));
}

// Where a symbolic tool writes an exact dim that is true (a number, or an expression of the
// graph inputs' symbols: the baselines keep only its true types) and the model leaves the
// dim unknown or a fresh symbol (dyn__N): a message, or ''.
function symbolicKnowsMore(name, theirs, mine, symbols, tool = PEERS.ort) {
  const dims = theirs[1];
  if (dims === null) return '';
  const said = `${tool} types it ${describeDims(dims)}`;
  if (mine === null || mine[1] === null || mine[1].length !== dims.length)
    return `${name}: ${said}, the model says ${mine === null ? 'nothing' : describeDims(mine[1])}`;
  for (let i = 0; i < dims.length; i++) {
    const d = dims[i];
    const m = mine[1][i];
    const exact = typeof d === 'number' || (typeof d === 'string' && isExpressionOf(d, symbols));
    if (exact && (m === null || (typeof m === 'string' && /^dyn__[0-9]+$/.test(m))))
      return `${name}: ${said}, the model says ${describeDims(mine[1])} (dim ${i}: ${d})`;
  }
  return '';
}

function parseArgs(argv) {
  const files = [];
  const options = {};
  const help = forEachArgument(argv, (arg, take) => {
    switch (arg) {
      case '-h':
      case '--help':
        return true;
      case '-q':
      case '--quiet':
        options.quiet = true;
        break;
      case '--key':
        options.key = take();
        break;
      default:
        if (arg.startsWith('-')) throw new EquivError(`unknown option ${arg}`);
        files.push(arg);
    }
    return false;
  });
  if (help) return { help: true };
  if (files.length !== 2) throw new EquivError('expected a model and a baselines file');
  return { files, options };
}

function summary(r) {
  const peers = Object.entries(r.peers).map(([k, p]) => (p.ran ? `${PEERS[k]} ${p.determined}` : `${PEERS[k]} did not run`));
  return `${r.determined} of ${r.values} values fully determined (ONNX's InferShapes ${r.onnx}, ${peers.join(', ')})`;
}

async function main(argv, out = process.stdout, err = process.stderr) {
  const { args, exit } = parseCommandLine('coverage', USAGE, parseArgs, argv, out, err);
  if (!args) return exit;
  const [modelFile, baselinesFile] = args.files;
  let r;
  try {
    r = compareCoverage(modelFile, baselinesFile, args.options.key || path.basename(modelFile));
  } catch (e) {
    if (!(e instanceof EquivError)) throw e;
    err.write(`coverage: error: ${e.file ? `${e.file}: ` : ''}${e.message}\n`);
    return 2;
  }
  if (!args.options.quiet) for (const p of r.problems) out.write(`${p}\n`);
  out.write(`coverage: ${r.ok ? 'OK' : `LESS (${r.problems.length} problems; first: ${r.problems[0]})`} ${modelFile}: ${summary(r)}\n`);
  return r.ok ? 0 : 1;
}

module.exports = { compareCoverage, knowsMore, symbolicKnowsMore, PEERS, main };

if (require.main === module) runMain('coverage', main);
