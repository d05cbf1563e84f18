#!/usr/bin/env node
'use strict';
// Type oracle: checks the types a model declares for its values (graph outputs and
// value_info, as onnx-infer-shapes writes them) against what ONNX Runtime produces.
// Every value with a declared type becomes a graph output; the model runs once per
// binding of its symbolic dims; each value's element type and dims must be the declared
// ones, symbolic dims evaluated at the binding (a dim_param such as "P+S" or "2*N" is the
// expression shapeprop writes; one no input binds, such as a fresh unk__0, must take one
// size everywhere in a run).
//
//   node tools/equiv/ort_types.js MODEL.onnx [--bind N=2,5 ...] [--fill NAME=EXPR ...]
//        [--default-dim 2] [--seed 1] [--require-full] [--quiet]
//
// --fill NAME=EXPR fills an integer input with the value of EXPR at the binding (a
// sequence length an op reads, say); other inputs are random as in equiv.js.
// --require-full also fails unless every value the main graph computes has a type with
// a known rank and no unknown dim ("fully typed").
//
// Exit status: 0 every declared type agrees (and, with --require-full, the model is
// fully typed), 1 a type differs (or is missing), 2 usage error or the model does not
// load or run.

const fs = require('node:fs');
const { decodeModel, copyFields, payload, lengthDelimited, varintBytes } = require('./onnx_proto');
const {
  randomTensor,
  mulberry32,
  streamSeed,
  expandBindings,
  parseCommandLine,
  forEachArgument,
  runMain,
  EquivError,
  DEFAULTS,
  loadOrt,
} = require('./equiv');

const USAGE = `usage: node ort_types.js MODEL.onnx [options]
  --bind NAME=v1,v2     sizes for symbolic dim NAME, one per run (zipped, as equiv.js)
  --fill NAME=EXPR      fill integer input NAME with EXPR at each binding (e.g. S-1)
  --default-dim N       size for symbolic dims no --bind names (default 2)
  --seed N              seed for the random inputs (default 1)
  --int-range LO,HI     integer inputs uniform in [LO, HI) (default 0,4, as equiv.js)
  --require-full        also fail unless every value of the main graph is fully typed
  --quiet               print only the final line
exit status: 0 agree, 1 a type differs or is missing, 2 usage error or a failed run`;

// ---------------------------------------------------------------------------------------
// Dim expressions, as shapeprop's Dim::str() writes them ("2*B*S+3"), and as other tools
// and exporters do ("floor(height/2 - 1/2) + 1", "batch*seq", "s0//2"): integers,
// symbols, + - * / // %, parentheses, and floor, ceil(ing), min, max, mod calls; `/` is
// exact division (floor and ceil take it to an integer). Anything else is one opaque
// symbol, spelled as it is.

const DIM_FUNCTIONS = {
  floor: (a) => Math.floor(a),
  ceil: (a) => Math.ceil(a),
  ceiling: (a) => Math.ceil(a),
  min: (...a) => Math.min(...a),
  max: (...a) => Math.max(...a),
  mod: (a, b) => a - b * Math.floor(a / b),
};
for (const [k, f] of Object.entries(DIM_FUNCTIONS)) DIM_FUNCTIONS[k[0].toUpperCase() + k.slice(1)] = f;

function parseExpression(text) {
  const tokens = text.match(/\s+|\d+|[A-Za-z_][A-Za-z0-9_]*|\/\/|[-+*/%(),]|./g) || [];
  const toks = tokens.filter((t) => !/^\s+$/.test(t));
  let i = 0;
  const peek = () => toks[i];
  const fail = () => {
    throw new Error('not an expression');
  };
  const expr = () => {
    let node = term();
    while (peek() === '+' || peek() === '-') node = { op: toks[i++], args: [node, term()] };
    return node;
  };
  const term = () => {
    let node = unary();
    while (['*', '/', '//', '%'].includes(peek())) node = { op: toks[i++], args: [node, unary()] };
    return node;
  };
  const unary = () => {
    if (peek() === '-') {
      i++;
      return { op: 'neg', args: [unary()] };
    }
    if (peek() === '+') {
      i++;
      return unary();
    }
    return atom();
  };
  const atom = () => {
    const t = toks[i++];
    if (t === undefined) fail();
    if (/^\d+$/.test(t)) return { num: Number(t) };
    if (t === '(') {
      const node = expr();
      if (toks[i++] !== ')') fail();
      return node;
    }
    if (!/^[A-Za-z_]/.test(t)) fail();
    if (peek() !== '(') return { sym: t };
    if (!DIM_FUNCTIONS[t]) fail();
    i++;
    const args = [expr()];
    while (peek() === ',') {
      i++;
      args.push(expr());
    }
    if (toks[i++] !== ')') fail();
    return { call: t, args };
  };
  const node = expr();
  if (i !== toks.length) fail();
  return node;
}

function parseDim(text) {
  try {
    return { expr: parseExpression(text), text };
  } catch {
    return { opaque: text };
  }
}

// A dim that is one symbol (an opaque name or a bare identifier): its name, or undefined.
function singleSymbol(dim) {
  if (dim.opaque !== undefined) return dim.opaque;
  return dim.expr.sym;
}

function evaluateNode(n, sizes) {
  if (n.num !== undefined) return n.num;
  if (n.sym !== undefined) return sizes[n.sym];
  const args = n.args.map((a) => evaluateNode(a, sizes));
  if (args.some((a) => a === undefined || Number.isNaN(a))) return undefined;
  const [a, b] = args;
  switch (n.op) {
    case '+': return a + b;
    case '-': return a - b;
    case '*': return a * b;
    case '/': return b === 0 ? undefined : a / b;
    case '//': return b === 0 ? undefined : Math.floor(a / b);
    case '%': return b === 0 ? undefined : a - b * Math.floor(a / b);
    case 'neg': return -a;
    default: return DIM_FUNCTIONS[n.call](...args);
  }
}

// The value at `sizes`, or undefined when a symbol has no size (or it is not an integer).
function evaluateDim(dim, sizes) {
  if (dim.opaque !== undefined) return sizes[dim.opaque];
  const v = evaluateNode(dim.expr, sizes);
  return Number.isInteger(v) ? v : undefined;
}

// A dim_param written inside a function and scoped to one call by realexports-flatten
// ("sym@@N", see tests/realexports/flatten.cc): `sym` itself when that is an input's
// symbol or an expression over them, otherwise a symbol of that call alone.
function scopedDim(param, sizes) {
  const m = /^(.*)@@(\d+)$/s.exec(param);
  if (!m) return parseDim(param);
  const base = parseDim(m[1]);
  if (evaluateDim(base, sizes) !== undefined) return base;
  return { opaque: param };
}

// ---------------------------------------------------------------------------------------
// The model with every typed value as a graph output.

// Element types onnxruntime-node hands back to JavaScript (its backend's dataTypeStrings):
// a session with an input or output of another type (bfloat16, the float8 and float4
// types, int2, uint2) does not load. int4 and uint4 are listed there, but 1.30 aborts
// the process (out of memory in OrtValueToNapiValue) returning one, so they are not here.
const RETURNABLE = new Set(['float32', 'uint8', 'int8', 'uint16', 'int16', 'int32', 'int64', 'string', 'bool',
  'float16', 'float64', 'uint32', 'uint64']);

// What ONNX Runtime runs: the model without its value_info and without the types of its
// outputs (so that ONNX Runtime infers and computes on its own, rather than check or
// take what is declared), and with every value of `names` as an untyped output. A value
// of `viaCast` (`[name, elemType, castName]`, a type the binding cannot return) is
// observed through an added Cast<to = FLOAT>(value) output named castName, which has its
// dims, and keeps a value_info entry with its declared element type and no shape: ONNX
// Runtime refuses to load a model whose value_info has another element type than its
// inference gives, and takes no dims from it.
function observable(bytes, names, viaCast = []) {
  let once = false;
  const nameOnly = (name) => lengthDelimited(12, lengthDelimited(1, Buffer.from(name, 'utf8')));
  const graphOf = (buf, from, to) => {
    const [s, e] = payload(buf, from, to);
    const g = copyFields(buf, s, e, (field, wire, f0, f1) => {
      if (field === 13 && wire === 2) return Buffer.alloc(0);
      if (field === 12 && wire === 2) {
        const [vs, ve] = payload(buf, f0, f1);
        let name = '';
        copyFields(buf, vs, ve, (vf, vw, v0, v1) => {
          if (vf === 1 && vw === 2) name = buf.subarray(...payload(buf, v0, v1)).toString('utf8');
          return Buffer.alloc(0);
        });
        return nameOnly(name);
      }
      return undefined;
    });
    const str = (field, text) => lengthDelimited(field, Buffer.from(text, 'utf8'));
    const int = (field, v) => Buffer.concat([varintBytes(field << 3), varintBytes(v)]);
    const toFloat = Buffer.concat([str(1, 'to'), int(3, 1), int(20, 2)]); // AttributeProto to: int = 1
    const casts = viaCast.map(([n, , castName]) =>
      lengthDelimited(1, Buffer.concat([str(1, n), str(2, castName), str(4, 'Cast'), lengthDelimited(5, toFloat)])));
    const elemTypeOnly = viaCast.map(([n, elemType]) =>
      lengthDelimited(13, Buffer.concat([str(1, n), lengthDelimited(2, lengthDelimited(1, int(1, elemType)))])));
    // Once, in the first of the GraphProto fields (protobuf merges several into one).
    const added = once ? [] : [...casts, ...elemTypeOnly, ...names.map(nameOnly), ...viaCast.map(([, , c]) => nameOnly(c))];
    once = true;
    return lengthDelimited(7, Buffer.concat([g, ...added]));
  };
  return copyFields(bytes, 0, bytes.length, (field, wire, from, to) =>
    field === 7 && wire === 2 ? graphOf(bytes, from, to) : undefined,
  );
}

// ---------------------------------------------------------------------------------------
// Checking.

// A dim as the model spells it (without the call scope realexports-flatten adds).
const spelled = (param) => param.replace(/@@\d+$/, '');

function describeDeclared(type) {
  if (type.kind !== 'tensor') return type.kind;
  const dims = type.shape ? `[${type.shape.map((d) => (d.value !== undefined ? d.value : d.param !== undefined ? spelled(d.param) : '?')).join(',')}]` : '';
  return `${type.dtype}${dims}`;
}

// Compares one value's declared type with what ORT produced. `sizes` holds the size of
// every symbol known so far in this run, and learns those only outputs name; `where`
// says where a value inside a function came from.
function compareValue(name, type, tensor, sizes, where = '') {
  const got = `${tensor.type}[${Array.from(tensor.dims, Number)}]`;
  const problem = (why) =>
    `${name}${where ? ` (${where})` : ''}: declared ${describeDeclared(type)}, ONNX Runtime gives ${got} (${why})`;
  if (type.kind !== 'tensor') return { problem: problem('not a tensor type') };
  if (type.dtype !== tensor.type) return { problem: problem('element type') };
  if (!type.shape) return { unknownRank: true };
  const dims = Array.from(tensor.dims, Number);
  if (dims.length !== type.shape.length) return { problem: problem('rank') };
  let unknownDims = 0;
  for (let i = 0; i < dims.length; i++) {
    const d = type.shape[i];
    if (d.value !== undefined) {
      if (d.value !== dims[i]) return { problem: problem(`dim ${i}`) };
    } else if (d.param !== undefined) {
      const dim = scopedDim(d.param, sizes);
      const v = evaluateDim(dim, sizes);
      if (v !== undefined) {
        if (v !== dims[i]) return { problem: problem(`dim ${i}: ${spelled(d.param)} is ${v} here`) };
        continue;
      }
      const single = singleSymbol(dim);
      if (single !== undefined) {
        sizes[single] = dims[i]; // a symbol only outputs name: it takes this size in the whole run
        continue;
      }
      // An expression over symbols no input binds: the same text is the same size.
      unknownDims++;
      const key = `\u0000${d.param}`;
      if (sizes[key] !== undefined && sizes[key] !== dims[i]) {
        return { problem: problem(`dim ${i}: ${spelled(d.param)} is ${sizes[key]} elsewhere in this run`) };
      }
      sizes[key] = dims[i];
    } else {
      unknownDims++;
    }
  }
  return { unknownDims };
}

// Sizes of the input symbols for one binding, and the inputs' concrete dims.
function inputShapes(model, binding, defaultDim) {
  const sizes = {};
  for (const vi of model.feedInputs) {
    if (vi.type.kind !== 'tensor' || !vi.type.shape) throw new EquivError(`input ${vi.name} has no tensor shape`);
    for (const d of vi.type.shape) {
      if (d.param === undefined) continue;
      const s = singleSymbol(parseDim(d.param));
      if (s !== undefined && sizes[s] === undefined) sizes[s] = binding[s] !== undefined ? binding[s] : defaultDim;
    }
  }
  for (const [s, v] of Object.entries(binding)) if (sizes[s] === undefined) sizes[s] = v;
  const shapes = new Map();
  for (const vi of model.feedInputs) {
    shapes.set(
      vi.name,
      vi.type.shape.map((d) => {
        if (d.value !== undefined) return d.value;
        if (d.param === undefined) return defaultDim;
        const v = evaluateDim(parseDim(d.param), sizes);
        if (v === undefined) throw new EquivError(`input ${vi.name}: cannot size dim ${d.param} (bind its symbols)`);
        return v;
      }),
    );
  }
  return { sizes, shapes };
}

// The conditions a written model records in shapeprop.assumptions ("; "-separated items)
// that a binding breaks: "symbolic dims >= 1", a range "1 <= seq <= 128", and a
// condition "EXPR >= N" (a window fits its padded input: floor((H+1)/2) >= 3). A run at
// such a binding is outside what the model states, so it is skipped and counted. Items
// of other forms (what was taken on trust) are not conditions on the sizes.
function brokenAssumptions(model, sizes) {
  const text = model.metadata ? model.metadata['shapeprop.assumptions'] : undefined;
  if (!text) return [];
  const broken = [];
  for (const item of text.split('; ')) {
    if (item === 'symbolic dims >= 1') {
      if (Object.values(sizes).some((v) => v < 1)) broken.push(item);
      continue;
    }
    let m = /^(-?\d+) <= (.+) <= (-?\d+)$/.exec(item);
    if (m) {
      const v = evaluateDim(parseDim(m[2]), sizes);
      if (v !== undefined && (v < Number(m[1]) || v > Number(m[3]))) broken.push(item);
      continue;
    }
    m = /^(.+) >= (-?\d+)$/.exec(item);
    if (m) {
      const v = evaluateDim(parseDim(m[1]), sizes);
      if (v !== undefined && v < Number(m[2])) broken.push(item);
    }
  }
  return broken;
}

function filledTensor(dtype, dims, value) {
  const n = dims.reduce((a, b) => a * b, 1);
  const big = dtype === 'int64' || dtype === 'uint64';
  const Arr = { int32: Int32Array, int64: BigInt64Array, uint8: Uint8Array, int8: Int8Array, uint64: BigUint64Array }[dtype];
  if (!Arr) throw new EquivError(`--fill only fills integer inputs, not ${dtype}`);
  const data = new Arr(n).fill(big ? BigInt(value) : value);
  return { dtype, dims, data };
}

async function checkTypes(file, options = {}) {
  const opts = { ...DEFAULTS, seed: 1, fill: {}, requireFull: false, ...options };
  const ort = loadOrt();
  let bytes;
  let model;
  try {
    bytes = fs.readFileSync(file);
    model = decodeModel(bytes);
  } catch (e) {
    throw new EquivError(`cannot read the model: ${e.message}`, file);
  }
  const g = model.graph;
  const inputNames = new Set(g.inputs.map((vi) => vi.name));
  const initializerNames = new Set(g.initializers.map((t) => t.name));
  const declared = [...g.outputs, ...g.valueInfo].filter((vi) => vi.type.kind !== 'none');
  const declaredNames = new Set(declared.map((vi) => vi.name));
  const outputNames = new Set(g.outputs.map((vi) => vi.name));
  // Only tensors: onnxruntime-node returns no sequence, map or optional (their declared
  // types go unchecked, and are counted in `unobservable`).
  const exposed = g.valueInfo.filter(
    (vi) => vi.type.kind === 'tensor' && !outputNames.has(vi.name) && !inputNames.has(vi.name) && !initializerNames.has(vi.name),
  );
  const unobservable = g.valueInfo.filter((vi) => vi.type.kind !== 'tensor' && vi.type.kind !== 'none').map((vi) => vi.name);
  const computed = g.nodeOutputs.filter((n) => n !== '');
  const untyped = computed.filter((n) => !declaredNames.has(n));
  const returnable = (vi) => vi.type.kind !== 'tensor' || RETURNABLE.has(vi.type.dtype);
  const taken = new Set([...computed, ...inputNames, ...initializerNames]);
  const castNames = new Map();
  for (const vi of exposed.filter((v) => !returnable(v))) {
    let candidate = `${vi.name}__ort_types_float`;
    for (let k = 0; taken.has(candidate); k++) candidate = `${vi.name}__ort_types_float${k}`;
    taken.add(candidate);
    castNames.set(vi.name, [vi.name, vi.type.elemType, candidate]);
  }

  let session;
  try {
    const plain = exposed.filter(returnable).map((vi) => vi.name);
    session = await ort.InferenceSession.create(observable(bytes, plain, [...castNames.values()]), {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      logSeverityLevel: 4,
      // What every value is, as the graph says, not what a fusion keeps of it (with all
      // values as outputs, ORT's optimizers have lost a constant-folded one's producer).
      graphOptimizationLevel: 'disabled',
    });
  } catch (e) {
    throw new EquivError(String(e.message).replace(/\s+/g, ' ').trim(), file);
  }
  const result = { ok: true, runs: [], untyped, partial: new Set(), checked: 0, unobservable };
  try {
    for (const binding of expandBindings(opts.bind)) {
      const { sizes, shapes } = inputShapes(model, binding, opts.defaultDim);
      const feeds = {};
      for (const vi of model.feedInputs) {
        const dims = shapes.get(vi.name);
        let t;
        if (opts.fill[vi.name] !== undefined) {
          const v = evaluateDim(parseDim(opts.fill[vi.name]), sizes);
          if (v === undefined) throw new EquivError(`--fill ${vi.name}: cannot evaluate ${opts.fill[vi.name]}`);
          t = filledTensor(vi.type.dtype, dims, v);
        } else {
          t = randomTensor(vi.type.dtype, dims, mulberry32(streamSeed(opts.seed, vi.name)), opts);
        }
        feeds[vi.name] = new ort.Tensor(t.dtype, t.data, t.dims);
      }
      const label = Object.entries(sizes).map(([k, v]) => `${k}=${v}`).join(' ') || 'static';
      const broken = brokenAssumptions(model, sizes);
      if (broken.length) {
        const run = { label, problems: [], skipped: `outside the model's assumptions: ${broken.join('; ')}` };
        result.runs.push(run);
        result.skipped = (result.skipped || 0) + 1;
        if (opts.onRun) opts.onRun(run);
        continue;
      }
      let out;
      try {
        out = await session.run(feeds);
      } catch (e) {
        throw new EquivError(`run failed (${label}): ${String(e.message).replace(/\s+/g, ' ').trim()}`, file);
      }
      const run = { label, problems: [] };
      for (const { name, type, doc } of declared) {
        // A value of a type the binding cannot return: its dims from its Cast to float, its
        // element type checked by ONNX Runtime at load against the value_info kept for it.
        const cast = castNames.has(name) && out[castNames.get(name)[2]];
        if (!out[name] && !cast) continue; // an input or initializer: nothing computed
        const tensor = cast ? { type: type.dtype, dims: cast.dims } : out[name];
        const c = compareValue(name, type, tensor, sizes, doc);
        result.checked++;
        if (c.problem) run.problems.push(c.problem);
        else if (c.unknownRank || c.unknownDims) result.partial.add(name);
      }
      result.runs.push(run);
      if (run.problems.length) result.ok = false;
      if (opts.onRun) opts.onRun(run);
    }
  } finally {
    await session.release();
  }
  result.fullyTyped = untyped.length === 0 && result.partial.size === 0;
  result.values = declaredNames.size;
  return result;
}

// ---------------------------------------------------------------------------------------
// Command line.

function parseArgs(argv) {
  const options = { bind: {}, fill: {} };
  let file;
  const help = forEachArgument(argv, (arg, take) => {
    const pair = () => {
      const spec = take();
      const m = /^([^=]+)=(.+)$/.exec(spec);
      if (!m) throw new EquivError(`${arg} expects NAME=VALUE, got '${spec}'`);
      return [m[1], m[2]];
    };
    switch (arg) {
      case '-h':
      case '--help':
        return true;
      case '--quiet':
      case '-q':
        options.quiet = true;
        break;
      case '--require-full':
        options.requireFull = true;
        break;
      case '--bind': {
        const [name, list] = pair();
        const sizes = list.split(',').map(Number);
        if (sizes.some((s) => !Number.isInteger(s) || s < 0)) throw new EquivError(`--bind ${name}: sizes are integers >= 0`);
        options.bind[name] = sizes;
        break;
      }
      case '--fill': {
        const [name, expr] = pair();
        options.fill[name] = expr;
        break;
      }
      case '--int-range': {
        const r = take().split(',').map(Number);
        if (r.length !== 2 || !r.every(Number.isInteger) || r[1] <= r[0]) throw new EquivError('--int-range takes LO,HI integers with LO < HI');
        options.intRange = r;
        break;
      }
      case '--default-dim':
      case '--seed': {
        const n = Number(take());
        if (!Number.isInteger(n) || n < 0) throw new EquivError(`${arg} takes an integer >= 0`);
        options[arg === '--seed' ? 'seed' : 'defaultDim'] = n;
        break;
      }
      default:
        if (arg.startsWith('-')) throw new EquivError(`unknown option ${arg}`);
        if (file) throw new EquivError('expected one model file');
        file = arg;
    }
    return false;
  });
  if (help) return { help: true };
  if (!file) throw new EquivError('expected one model file');
  return { file, options };
}

async function main(argv, out = process.stdout, err = process.stderr) {
  const { args: parsed, exit } = parseCommandLine('ort_types', USAGE, parseArgs, argv, out, err);
  if (!parsed) return exit;
  const { file, options } = parsed;
  if (!options.quiet) {
    options.onRun = (run) =>
      out.write(`${run.label}: ${run.skipped ? `SKIPPED ${run.skipped}` : run.problems.length ? `MISMATCH ${run.problems.join('; ')}` : 'OK'}\n`);
  }
  let r;
  try {
    r = await checkTypes(file, options);
  } catch (e) {
    if (!(e instanceof EquivError)) throw e;
    err.write(`ort_types: error: ${e.file ? `${e.file}: ` : ''}${e.message}\n`);
    return 2;
  }
  const ran = r.runs.length - (r.skipped || 0);
  const runs = `${ran} run${ran === 1 ? '' : 's'}` + (r.skipped ? ` (${r.skipped} binding${r.skipped === 1 ? '' : 's'} skipped, outside the model's assumptions)` : '');
  if (ran === 0 && r.skipped) {
    out.write(`ort_types: NOTHING RUN ${file}: ${r.runs[0].skipped}\n`);
    return 1;
  }
  if (!r.ok) {
    const first = r.runs.find((run) => run.problems.length);
    out.write(`ort_types: MISMATCH ${file}: ${first.label}: ${first.problems[0]}\n`);
    return 1;
  }
  const gaps = [];
  if (r.untyped.length) gaps.push(`no type for ${r.untyped.join(', ')}`);
  if (r.partial.size) gaps.push(`unknown dims or rank in ${[...r.partial].join(', ')}`);
  if (options.requireFull && gaps.length) {
    out.write(`ort_types: NOT FULLY TYPED ${file}: ${gaps.join('; ')}\n`);
    return 1;
  }
  out.write(
    `ort_types: OK ${file}: ${r.values} declared types agree with ONNX Runtime in ${runs}` +
      (gaps.length ? ` (${gaps.join('; ')})` : ' (fully typed)') + '\n',
  );
  return 0;
}

module.exports = { checkTypes, parseDim, evaluateDim, scopedDim, compareValue, describeDeclared, main };

if (require.main === module) runMain('ort_types', main);
