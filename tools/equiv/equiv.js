#!/usr/bin/env node
'use strict';
// Numerical-equivalence oracle: runs two ONNX models on ONNX Runtime (CPU) with the same
// seeded random inputs and compares their outputs. Used to check that a model rewritten
// by shapeprop (annotated, specialized, inlined) still computes what the original did.
//
//   node tools/equiv/equiv.js A.onnx B.onnx [--seeds 1,2,3] [--bind N=2,5 ...]
//        [--default-dim 2] [--rtol R] [--atol A] [--exact] [--int-range 0,4] [--float-range -1,1]
//        [--values NAME=v1,v2,...] [--threads 1] [--no-optimize] [--quiet]
//
// Exit status: 0 all runs agree, 1 some run differs (or the signatures differ),
// 2 usage error, or a model cannot be loaded or run.
//
// Runs: one per (seed, binding). `--bind NAME=v1,v2,...` lists sizes for the symbolic
// dim NAME; several --bind lists are zipped (run i uses the i-th value of each), and a
// one-value list applies to every run. Zipping rather than a cartesian product keeps
// the run count linear and lets related dims (batch, seq) move together. Symbolic dims
// that are not bound, and unknown dims, get --default-dim. A dim that is static in one
// model and symbolic in the other takes the static size.
//
// Chosen values: `--values NAME=v1,v2,...` feeds the input NAME these values, repeated in
// order to its size, in every run (the edges of a conversion: -0, inf, nan, subnormals);
// `--exact` then compares floats bit for bit but for NaN's payload (-0 differs from +0, a
// flushed subnormal from the subnormal), where the tolerances would hide the difference.
//
// Runtime differences: a run whose outputs differ with ONNX Runtime's graph optimizations
// on (the default) is run again with them off. Where the outputs then agree, the two
// graphs compute the same node by node on the same kernels, and the difference is what
// ONNX Runtime's optimizer made of each (a fusion one graph's shape allows and the other's
// not, such as a MatMul followed by a Div by a constant, which it computes as a
// FusedMatMul scaled by the constant's float32 reciprocal): the run agrees, and its line
// says that the outputs differ only with the graph optimizations, and by how much.

const fs = require('node:fs');
const { decodeModel } = require('./onnx_proto');

// Default tolerances per dtype: |a - b| <= atol + rtol * max(|a|, |b|). Symmetric in a
// and b, so swapping the two models never changes the verdict.
const TOLERANCES = {
  float32: { rtol: 1e-4, atol: 1e-5 },
  float16: { rtol: 1e-2, atol: 1e-3 },
  float64: { rtol: 1e-9, atol: 1e-12 },
};

const DEFAULTS = {
  seeds: [1, 2, 3],
  bind: {},
  defaultDim: 2,
  rtol: undefined, // when set, overrides the per-dtype value for every float dtype
  atol: undefined,
  intRange: [0, 4], // [lo, hi): small non-negative, so index-like inputs stay valid
  floatRange: [-1, 1], // uniform between the two (rounding to float16/32 may reach hi)
  values: {}, // input name -> chosen values (numbers), fed instead of random data
  exact: false, // floats compared bit for bit (any NaN equals any NaN; -0 is not +0)
  threads: 1, // one thread: deterministic reductions, and polite on shared machines
  optimize: true, // ONNX Runtime's graph optimizations (--no-optimize: none)
  quiet: false,
};

const USAGE = `usage: node equiv.js A.onnx B.onnx [options]
  --seeds 1,2,3         seeds for the random inputs (default 1,2,3)
  --bind NAME=v1,v2     sizes for symbolic dim NAME, one per run; repeatable, lists are
                        zipped (run i takes the i-th value of each; a single value applies
                        to all runs)
  --default-dim N       size for unbound symbolic and unknown dims (default 2)
  --rtol R, --atol A    tolerance for every float dtype (default per dtype: float32
                        1e-4/1e-5, float16 1e-2/1e-3, float64 1e-9/1e-12); ints/bools exact
  --exact               floats must be identical: no tolerance, -0 differs from +0 (any NaN
                        still equals any NaN)
  --int-range LO,HI     integer inputs uniform in [LO, HI) (default 0,4)
  --float-range LO,HI   float inputs uniform between LO and HI (default -1,1)
  --values NAME=v1,v2   feed input NAME these values (numbers, inf, -inf, nan, -0),
                        repeated in order to its size, in every run; repeatable
  --threads N           ONNX Runtime intra-op threads (default 1)
  --no-optimize         run without ONNX Runtime's graph optimizations (its inlining of a
                        constant If fails on some nested branches); otherwise a run whose
                        outputs differ is run again without them, and agrees if they agree
  --quiet               print only the final line
exit status: 0 equivalent, 1 mismatch, 2 usage error or a model failed to load/run`;

// An error that makes the CLI exit 2: bad usage, or a model that cannot be read, loaded
// or run. `file` names the model involved, when there is one.
class EquivError extends Error {
  constructor(message, file) {
    super(message);
    this.name = 'EquivError';
    this.file = file;
  }
}

// ---------------------------------------------------------------------------------------
// Seeded random numbers.

// mulberry32: tiny, fast, good enough for test inputs. Returns floats in [0, 1).
function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// FNV-1a over the seed and the input name: each input gets its own stream, so the data
// of one input does not depend on which other inputs a model has or their order.
function streamSeed(seed, name) {
  let h = 0x811c9dc5;
  const mix = (byte) => {
    h ^= byte & 0xff;
    h = Math.imul(h, 0x01000193);
  };
  for (let i = 0; i < 4; i++) mix(seed >>> (8 * i));
  for (const b of Buffer.from(name, 'utf8')) mix(b);
  return h >>> 0;
}

// ---------------------------------------------------------------------------------------
// float16 bits <-> number.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

// IEEE binary32 -> binary16 bits, round to nearest even, with subnormals, overflow to
// infinity, and NaN kept NaN (quiet).
function floatToHalf(value) {
  f32[0] = value;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0); // Inf or NaN
  const e = exp - 127 + 15; // rebias
  if (e >= 0x1f) return sign | 0x7c00; // too large: Inf
  if (e <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit 1 into place.
    if (e < -10) return sign; // below half the smallest subnormal: signed zero
    const m = mant | 0x800000;
    const shift = 14 - e;
    let half = m >>> shift;
    const rem = m & ((1 << shift) - 1);
    const mid = 1 << (shift - 1);
    if (rem > mid || (rem === mid && (half & 1))) half++;
    return sign | half;
  }
  let half = sign | (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  // Round to nearest even; a carry out of the mantissa correctly bumps the exponent
  // (and reaches Inf at the top).
  if (rem > 0x1000 || (rem === 0x1000 && (half & 1))) half++;
  return half;
}

function halfToFloat(h) {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

// ---------------------------------------------------------------------------------------
// Inputs.

const INT_RANGES = {
  int8: [-(2 ** 7), 2 ** 7 - 1],
  uint8: [0, 2 ** 8 - 1],
  int16: [-(2 ** 15), 2 ** 15 - 1],
  uint16: [0, 2 ** 16 - 1],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint32: [0, 2 ** 32 - 1],
  int64: [-(2 ** 53), 2 ** 53],
  uint64: [0, 2 ** 53],
};
const INT_ARRAYS = {
  int8: Int8Array,
  uint8: Uint8Array,
  int16: Int16Array,
  uint16: Uint16Array,
  int32: Int32Array,
  uint32: Uint32Array,
  int64: BigInt64Array,
  uint64: BigUint64Array,
};

// Random data for one input tensor: {dtype, dims, data} with `data` in the layout
// onnxruntime-node expects (float16 as Uint16Array bits, bool as Uint8Array 0/1,
// 64-bit ints as BigInt arrays, string as string[]).
function randomTensor(dtype, dims, rng, opts) {
  const n = dims.reduce((a, b) => a * b, 1);
  const [flo, fhi] = opts.floatRange;
  const randFloat = () => flo + (fhi - flo) * rng();
  const [ilo, ihi] = opts.intRange;
  const randInt = () => ilo + Math.floor((ihi - ilo) * rng());
  let data;
  switch (dtype) {
    case 'float32':
    case 'float64':
      data = new (dtype === 'float32' ? Float32Array : Float64Array)(n);
      for (let i = 0; i < n; i++) data[i] = randFloat();
      break;
    case 'float16':
      data = new Uint16Array(n);
      for (let i = 0; i < n; i++) data[i] = floatToHalf(randFloat());
      break;
    case 'bool':
      data = new Uint8Array(n);
      for (let i = 0; i < n; i++) data[i] = rng() < 0.5 ? 1 : 0;
      break;
    case 'string':
      data = Array.from({ length: n }, () => `s${randInt()}`);
      break;
    default: {
      const Arr = INT_ARRAYS[dtype];
      if (!Arr) throw new EquivError(`input dtype ${dtype} is not supported`);
      // Out-of-range requests are clamped to the dtype rather than wrapped, so e.g.
      // --int-range -2,2 gives uint8 inputs in {0, 1}.
      const [tlo, thi] = INT_RANGES[dtype];
      const clamp = (v) => Math.min(thi, Math.max(tlo, v));
      const big = Arr === BigInt64Array || Arr === BigUint64Array;
      data = new Arr(n);
      for (let i = 0; i < n; i++) data[i] = big ? BigInt(clamp(randInt())) : clamp(randInt());
    }
  }
  return { dtype, dims, data };
}

// The tensor of `dtype` and `dims` holding `values` (numbers) repeated in order: the
// --values of one input. Each value must be one of the dtype's (an integer in range for
// integer dtypes, 0 or 1 for bool); floats are rounded to float32 or float16 as fed.
function chosenTensor(name, dtype, dims, values) {
  const n = dims.reduce((a, b) => a * b, 1);
  if (n < values.length) {
    throw new EquivError(`--values ${name}: ${values.length} values for a tensor of ${n} elements`);
  }
  const at = (i) => values[i % values.length];
  let data;
  switch (dtype) {
    case 'float32':
    case 'float64':
      data = (dtype === 'float32' ? Float32Array : Float64Array).from({ length: n }, (_, i) => at(i));
      break;
    case 'float16':
      data = Uint16Array.from({ length: n }, (_, i) => floatToHalf(at(i)));
      break;
    default: {
      const range = dtype === 'bool' ? [0, 1] : INT_RANGES[dtype];
      const Arr = dtype === 'bool' ? Uint8Array : INT_ARRAYS[dtype];
      if (!Arr) throw new EquivError(`--values ${name}: input dtype ${dtype} is not supported`);
      const bad = values.find((v) => !Number.isInteger(v) || v < range[0] || v > range[1]);
      if (bad !== undefined) throw new EquivError(`--values ${name}: ${bad} is not a ${dtype} value`);
      const big = Arr === BigInt64Array || Arr === BigUint64Array;
      data = new Arr(n);
      for (let i = 0; i < n; i++) data[i] = big ? BigInt(at(i)) : at(i);
    }
  }
  return { dtype, dims, data };
}

// ---------------------------------------------------------------------------------------
// Signatures and bindings.

function describeShape(shape) {
  if (!shape) return '?';
  return `[${shape.map((d) => (d.value !== undefined ? d.value : d.param !== undefined ? d.param : '?')).join(',')}]`;
}

// Checks that the two models take the same inputs (by name, dtype, rank, static dims) and
// return the same outputs (names, in order). Returns a list of differences (text).
function signatureDifferences(sigA, sigB) {
  const diffs = [];
  const byNameB = new Map(sigB.inputs.map((vi) => [vi.name, vi]));
  const namesA = new Set(sigA.inputs.map((vi) => vi.name));
  for (const a of sigA.inputs) {
    const b = byNameB.get(a.name);
    if (!b) {
      diffs.push(`input ${a.name} only in A`);
      continue;
    }
    const ta = a.type;
    const tb = b.type;
    if (ta.kind === 'tensor' && tb.kind === 'tensor') {
      if (ta.elemType !== tb.elemType) diffs.push(`input ${a.name} dtype ${ta.dtype} vs ${tb.dtype}`);
      if (ta.shape && tb.shape) {
        if (ta.shape.length !== tb.shape.length) {
          diffs.push(`input ${a.name} shape ${describeShape(ta.shape)} vs ${describeShape(tb.shape)}`);
        } else {
          ta.shape.forEach((da, i) => {
            const db = tb.shape[i];
            if (da.value !== undefined && db.value !== undefined && da.value !== db.value) {
              diffs.push(`input ${a.name} shape ${describeShape(ta.shape)} vs ${describeShape(tb.shape)}`);
            }
          });
        }
      }
    } else if (ta.kind !== tb.kind) {
      diffs.push(`input ${a.name} kind ${ta.kind} vs ${tb.kind}`);
    }
  }
  for (const b of sigB.inputs) if (!namesA.has(b.name)) diffs.push(`input ${b.name} only in B`);
  const outA = sigA.outputs.map((vi) => vi.name);
  const outB = sigB.outputs.map((vi) => vi.name);
  if (outA.join('\0') !== outB.join('\0')) {
    diffs.push(`outputs (${outA.join(', ')}) vs (${outB.join(', ')})`);
  }
  return diffs;
}

// Splits the --bind lists into one {name: size} map per run (zipped, see the header).
function expandBindings(bind) {
  const names = Object.keys(bind);
  if (names.length === 0) return [{}];
  const runs = Math.max(...names.map((n) => bind[n].length));
  for (const n of names) {
    if (bind[n].length !== 1 && bind[n].length !== runs) {
      throw new EquivError(
        `--bind ${n} has ${bind[n].length} values; every list needs ${runs} values or 1 (lists are zipped)`,
      );
    }
  }
  return Array.from({ length: runs }, (_, i) =>
    Object.fromEntries(names.map((n) => [n, bind[n].length === 1 ? bind[n][0] : bind[n][i]])),
  );
}

// Concrete dims for every fed input of A (the inputs are fed to both models by name).
// Returns {shapes: Map(name -> dims), symbols: {param: size}} where symbols lists the
// symbolic dims that occurred, with the size they got. A symbol that sits where the
// other model has a static size is pinned to that size everywhere it occurs, so that
// e.g. A: X[N], Y[N] vs B: X[4], Y[N] feeds Y with 4 rows too.
function resolveShapes(sigA, sigB, binding, defaultDim) {
  const byNameB = new Map(sigB.inputs.map((vi) => [vi.name, vi]));
  const pairs = []; // [name, rank, shapeA | null, shapeB | null]
  for (const a of sigA.inputs) {
    if (a.type.kind !== 'tensor') {
      throw new EquivError(`input ${a.name} is a ${a.type.kind}, only tensor inputs are supported`);
    }
    const b = byNameB.get(a.name);
    let shapeA = a.type.shape;
    let shapeB = b && b.type.kind === 'tensor' ? b.type.shape : null;
    if (!shapeA && !shapeB) {
      throw new EquivError(`input ${a.name} has no shape (unknown rank); cannot make data for it`);
    }
    const rank = (shapeA || shapeB).length;
    if (shapeB && shapeB.length !== rank) shapeB = null; // reported by signatureDifferences
    pairs.push([a.name, rank, shapeA || [], shapeB || []]);
  }
  const pinned = {};
  for (const [, rank, shapeA, shapeB] of pairs) {
    for (let i = 0; i < rank; i++) {
      const da = shapeA[i] || {};
      const db = shapeB[i] || {};
      if (da.param !== undefined && db.value !== undefined && !(da.param in pinned)) pinned[da.param] = db.value;
      if (db.param !== undefined && da.value !== undefined && !(db.param in pinned)) pinned[db.param] = da.value;
    }
  }
  const symbols = {};
  const sizeOf = (param) => {
    if (!(param in symbols)) {
      symbols[param] = param in pinned ? pinned[param] : param in binding ? binding[param] : defaultDim;
    }
    return symbols[param];
  };
  const shapes = new Map();
  for (const [name, rank, shapeA, shapeB] of pairs) {
    const dims = [];
    for (let i = 0; i < rank; i++) {
      const da = shapeA[i] || {};
      const db = shapeB[i] || {};
      // Size every symbol, even one overridden by a static dim, so the run label shows it.
      const sa = da.param !== undefined ? sizeOf(da.param) : undefined;
      const sb = db.param !== undefined ? sizeOf(db.param) : undefined;
      if (da.value !== undefined) dims.push(da.value);
      else if (db.value !== undefined) dims.push(db.value);
      else if (sa !== undefined) dims.push(sa);
      else if (sb !== undefined) dims.push(sb);
      else dims.push(defaultDim);
    }
    shapes.set(name, dims);
  }
  return { shapes, symbols };
}

// ---------------------------------------------------------------------------------------
// Comparison.

// Reads element i of an output tensor as something comparable: a number for floats
// (float16 bits decoded), a BigInt for 64-bit ints, a number/string/0-1 otherwise.
function elementReader(tensor) {
  const { type, data } = tensor;
  if (type === 'float16' && data instanceof Uint16Array) return (i) => halfToFloat(data[i]);
  if (type === 'bool') return (i) => (data[i] ? 1 : 0);
  return (i) => data[i];
}

function unflatten(flat, dims) {
  const index = new Array(dims.length);
  for (let k = dims.length - 1; k >= 0; k--) {
    index[k] = dims[k] === 0 ? 0 : flat % dims[k];
    flat = Math.floor(flat / (dims[k] || 1));
  }
  return index;
}

function formatValue(v, dtype) {
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'string') return JSON.stringify(v);
  if (dtype === 'float32') return String(Number(v.toPrecision(9)));
  if (dtype === 'float16') return String(Number(v.toPrecision(5)));
  return String(v);
}

// Compares one output of A with the same output of B. `tensorA`/`tensorB` are
// onnxruntime-node tensors (or anything with {type, dims, data}). Returns
//   {ok, detail, maxAbsDiff, mismatches, first: {flat, index, a, b} | undefined}
// where detail is a one-line description of the difference ('' when ok).
function compareTensors(tensorA, tensorB, tol = {}) {
  const dtype = tensorA.type;
  if (dtype !== tensorB.type) {
    return { ok: false, detail: `dtype ${dtype} vs ${tensorB.type}`, maxAbsDiff: NaN, mismatches: NaN };
  }
  const dimsA = Array.from(tensorA.dims, Number);
  const dimsB = Array.from(tensorB.dims, Number);
  if (dimsA.join(',') !== dimsB.join(',')) {
    return { ok: false, detail: `shape [${dimsA}] vs [${dimsB}]`, maxAbsDiff: NaN, mismatches: NaN };
  }
  const isFloat = dtype in TOLERANCES;
  const rtol = isFloat ? (tol.rtol !== undefined ? tol.rtol : TOLERANCES[dtype].rtol) : 0;
  const atol = isFloat ? (tol.atol !== undefined ? tol.atol : TOLERANCES[dtype].atol) : 0;
  const getA = elementReader(tensorA);
  const getB = elementReader(tensorB);
  const n = dimsA.reduce((x, y) => x * y, 1);
  let mismatches = 0;
  let first;
  let maxAbsDiff = 0;
  for (let i = 0; i < n; i++) {
    const a = getA(i);
    const b = getB(i);
    let same;
    if (!isFloat) {
      same = a === b;
    } else if (tol.exact) {
      same = Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b));
      if (!same) maxAbsDiff = Math.max(maxAbsDiff, Number.isFinite(a - b) ? Math.abs(a - b) : Infinity);
    } else if (Number.isFinite(a) && Number.isFinite(b)) {
      const d = Math.abs(a - b);
      if (d > maxAbsDiff) maxAbsDiff = d;
      same = d <= atol + rtol * Math.max(Math.abs(a), Math.abs(b));
    } else {
      // NaN matches NaN; an infinity matches only the same infinity.
      same = (Number.isNaN(a) && Number.isNaN(b)) || a === b;
      if (!same) maxAbsDiff = Infinity;
    }
    if (!same) {
      if (mismatches === 0) first = { flat: i, index: unflatten(i, dimsA), a, b };
      mismatches++;
    }
  }
  if (!isFloat && mismatches > 0) maxAbsDiff = NaN; // not meaningful for ints/strings
  let detail = '';
  if (mismatches > 0) {
    detail =
      `${mismatches}/${n} elements differ, first at [${first.index}]: ` +
      `A=${formatValue(first.a, dtype)} B=${formatValue(first.b, dtype)}`;
    if (isFloat && tol.exact) detail += ` (exact; max |diff| ${formatValue(maxAbsDiff, 'float32')})`;
    else if (isFloat) detail += ` (max |diff| ${formatValue(maxAbsDiff, 'float32')}, rtol ${rtol} atol ${atol})`;
  }
  return { ok: mismatches === 0, detail, maxAbsDiff, mismatches, first };
}

// ---------------------------------------------------------------------------------------
// Running.

let ortModule;
function ort() {
  if (!ortModule) {
    // onnxruntime-node 1.30's binding takes float16 data as Uint16Array bits only. Where
    // the runtime has a Float16Array (Node.js 24: Debian sid's), onnxruntime-common would
    // hand the binding one, which it reads as empty ("not enough space: expected 40, got
    // 0"); without it, onnxruntime-common keeps the Uint16Array bits this file makes.
    delete globalThis.Float16Array;
    // onnxruntime-node 1.30's library starts Microsoft's telemetry when a session is made
    // (it writes /tmp/mat-debug-<pid>.log and ~/.cache/Microsoft/ on every run): an oracle
    // run sends and leaves nothing, unless the caller set the variable itself.
    if (process.env.ORT_DISABLE_TELEMETRY === undefined) process.env.ORT_DISABLE_TELEMETRY = '1';
    // SHAPEPROP_ORT=1.31 picks onnxruntime-node 1.31.1 (installed beside 1.30 as the npm
    // alias onnxruntime-node-1.31: it reads ai.onnx opsets 27 and 28), for ort_types.js too.
    const wanted = process.env.SHAPEPROP_ORT ? `onnxruntime-node-${process.env.SHAPEPROP_ORT}` : 'onnxruntime-node';
    try {
      ortModule = require(wanted);
    } catch (e) {
      throw new EquivError(
        `cannot load ${wanted} (run 'npm ci --ignore-scripts' in ${__dirname}): ${e.message}`,
      );
    }
  }
  return ortModule;
}

function oneLine(text) {
  return String(text).replace(/\s+/g, ' ').trim();
}

// Loads a model into ONNX Runtime and decodes its signature from the file. ORT goes
// first so that a broken file is reported with ORT's own message.
async function loadModel(file, opts = {}) {
  let session;
  try {
    session = await ort().InferenceSession.create(file, {
      intraOpNumThreads: opts.threads || DEFAULTS.threads,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      graphOptimizationLevel: (opts.optimize ?? DEFAULTS.optimize) ? 'all' : 'disabled',
      // Only fatal messages: errors come back as exceptions and are printed on one line.
      logSeverityLevel: 4,
    });
  } catch (e) {
    throw new EquivError(oneLine(e.message), file);
  }
  let model;
  try {
    model = decodeModel(fs.readFileSync(file));
  } catch (e) {
    await session.release();
    throw new EquivError(`cannot decode the model: ${oneLine(e.message)}`, file);
  }
  return {
    file,
    session,
    model,
    signature: { inputs: model.feedInputs, outputs: model.graph.outputs },
  };
}

function describeRun(seed, symbols) {
  return [`seed=${seed}`, ...Object.entries(symbols).map(([k, v]) => `${k}=${v}`)].join(' ');
}

// Runs A and B for every (seed, binding) and compares. Options are those of DEFAULTS;
// `onRun(run)` is called after each run. Returns
//   {ok, runs: [{seed, symbols, label, ok, detail, outputs: [{name, ...compareTensors}]}],
//    signatureDiffs: [text], unusedBindings: [--bind names no input dim carries]}
// When the inputs differ (names, dtypes, ranks, static dims) nothing is run: ok is false,
// runs is empty and signatureDiffs says why.
// Throws EquivError when a model cannot be loaded or run, or options are invalid.
async function compareModels(fileA, fileB, options = {}) {
  const opts = { ...DEFAULTS, ...options };
  const bindings = expandBindings(opts.bind);
  const A = await loadModel(fileA, opts);
  let B;
  try {
    B = await loadModel(fileB, opts);
  } catch (e) {
    await A.session.release();
    throw e;
  }
  const optimized = opts.optimize ?? DEFAULTS.optimize;
  let unoptimized; // the two models without graph optimizations, loaded at the first mismatch
  try {
    const signatureDiffs = signatureDifferences(A.signature, B.signature);
    const result = { ok: true, runs: [], signatureDiffs, unusedBindings: [] };
    // Different inputs leave nothing sensible to feed; still a verdict, not an error.
    if (signatureDiffs.some((d) => d.startsWith('input '))) {
      result.ok = false;
      return result;
    }
    const fed = new Set(A.signature.inputs.map((vi) => vi.name));
    const unknown = Object.keys(opts.values).filter((name) => !fed.has(name));
    if (unknown.length > 0) throw new EquivError(`--values ${unknown[0]}: the models have no input of that name`);
    const outputNames = A.signature.outputs.map((vi) => vi.name);
    const namesB = new Set(B.signature.outputs.map((vi) => vi.name));
    // The outputs' differences (texts) and comparisons of one run of the two sessions.
    const compareOutputs = (outA, outB) => {
      const problems = [];
      const outputs = [];
      for (const name of outputNames) {
        if (!namesB.has(name)) continue; // already in signatureDiffs
        const cmp = compareTensors(outA[name], outB[name], opts);
        outputs.push({ name, ...cmp });
        if (!cmp.ok) problems.push(`${name}: ${cmp.detail}`);
      }
      return { problems, outputs };
    };
    for (const binding of bindings) {
      const { shapes, symbols } = resolveShapes(A.signature, B.signature, binding, opts.defaultDim);
      for (const seed of opts.seeds) {
        const feeds = {};
        for (const vi of A.signature.inputs) {
          const t =
            vi.name in opts.values
              ? chosenTensor(vi.name, vi.type.dtype, shapes.get(vi.name), opts.values[vi.name])
              : randomTensor(vi.type.dtype, shapes.get(vi.name), mulberry32(streamSeed(seed, vi.name)), opts);
          feeds[vi.name] = new (ort().Tensor)(t.dtype, t.data, t.dims);
        }
        const label = describeRun(seed, symbols);
        const outA = await runSession(A, feeds, label);
        const outB = await runSession(B, feeds, label);
        const run = { seed, symbols, label, ok: true, detail: '', outputs: [], runtimeOnly: '' };
        const compared = compareOutputs(outA, outB);
        run.outputs = compared.outputs;
        if (compared.problems.length > 0 && optimized && signatureDiffs.length === 0) {
          // Outputs that differ only where ONNX Runtime's graph optimizations ran differ by
          // what its optimizer made of each graph (a fusion that one graph's shape allows
          // and the other's not, a constant it computes in another precision), not by what
          // the graphs compute: node by node, on the same kernels, they agree.
          unoptimized ??= await loadUnoptimized(fileA, fileB, opts);
          const again = unoptimized && (await runBoth(unoptimized, feeds, label));
          if (again && compareOutputs(again.outA, again.outB).problems.length === 0) {
            run.runtimeOnly = compared.problems.join('; ');
          }
        }
        const problems = run.runtimeOnly ? [] : [...signatureDiffs, ...compared.problems];
        run.ok = problems.length === 0;
        run.detail = problems.join('; ');
        result.runs.push(run);
        if (!run.ok) result.ok = false;
        if (opts.onRun) opts.onRun(run);
      }
    }
    // A --bind name that no input dim carries is most likely a typo.
    const seen = new Set(result.runs.flatMap((r) => Object.keys(r.symbols)));
    result.unusedBindings = Object.keys(opts.bind).filter((n) => !seen.has(n));
    return result;
  } finally {
    await A.session.release();
    await B.session.release();
    if (unoptimized) {
      await unoptimized.A.session.release();
      await unoptimized.B.session.release();
    }
  }
}

// Runs both models of `pair` ({A, B}) on `feeds`: {outA, outB}, or null when one fails.
async function runBoth(pair, feeds, label) {
  try {
    return { outA: await runSession(pair.A, feeds, label), outB: await runSession(pair.B, feeds, label) };
  } catch (e) {
    if (!(e instanceof EquivError)) throw e;
    return null;
  }
}

// Both models loaded without ONNX Runtime's graph optimizations, or null when one of them
// does not load so (the optimized verdict then stands).
async function loadUnoptimized(fileA, fileB, opts) {
  let A;
  try {
    A = await loadModel(fileA, { ...opts, optimize: false });
    return { A, B: await loadModel(fileB, { ...opts, optimize: false }) };
  } catch (e) {
    if (!(e instanceof EquivError)) throw e;
    if (A) await A.session.release();
    return null;
  }
}

async function runSession(model, feeds, label) {
  try {
    return await model.session.run(feeds, { logSeverityLevel: 4 });
  } catch (e) {
    throw new EquivError(`run failed (${label}): ${oneLine(e.message)}`, model.file);
  }
}

// ---------------------------------------------------------------------------------------
// Command line.

const RUNTIME_ONLY = "differ only with ONNX Runtime's graph optimizations";

function parseNumberList(flag, text, { integer = false, count } = {}) {
  const values = String(text)
    .split(',')
    .map((s) => s.trim());
  const nums = values.map(Number);
  if (
    values.some((s) => s === '') ||
    nums.some((v) => !Number.isFinite(v) || (integer && !Number.isInteger(v))) ||
    (count !== undefined && nums.length !== count)
  ) {
    const what = count !== undefined ? `${count} comma-separated ` : 'a comma-separated list of ';
    throw new EquivError(`${flag} expects ${what}${integer ? 'integers' : 'numbers'}, got '${text}'`);
  }
  return nums;
}

// Calls handle(arg, takeValue) for each command-line argument; an option's value is the
// part after '=' or the next argument (takeValue throws an EquivError when there is
// none). Stops, returning true, when handle returns true (as for --help).
function forEachArgument(argv, handle) {
  for (let i = 0; i < argv.length; i++) {
    let arg = argv[i];
    let value;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    if (eq > 0) {
      value = arg.slice(eq + 1);
      arg = arg.slice(0, eq);
    }
    const takeValue = () => {
      if (value !== undefined) return value;
      if (i + 1 >= argv.length) throw new EquivError(`${arg} needs a value`);
      return argv[++i];
    };
    if (handle(arg, takeValue)) return true;
  }
  return false;
}

// The numbers of a --values list: JavaScript's number syntax, and inf, -inf, nan.
function parseValues(flag, text) {
  const words = { inf: Infinity, '+inf': Infinity, '-inf': -Infinity, nan: NaN };
  const values = String(text)
    .split(',')
    .map((s) => s.trim());
  const bad = values.find((s) => s === '' || (!(s.toLowerCase() in words) && Number.isNaN(Number(s))));
  if (bad !== undefined) throw new EquivError(`${flag} expects numbers, inf, -inf or nan, got '${bad}'`);
  return values.map((s) => (s.toLowerCase() in words ? words[s.toLowerCase()] : Number(s)));
}

// Parses argv (without 'node equiv.js'). Returns {files: [A, B], options} or {help: true}.
function parseArgs(argv) {
  const files = [];
  const options = { bind: {}, values: {} };
  const help = forEachArgument(argv, (arg, takeValue) => {
    switch (arg) {
      case '-h':
      case '--help':
        return true;
      case '--quiet':
      case '-q':
        options.quiet = true;
        break;
      case '--seeds':
        options.seeds = parseNumberList(arg, takeValue(), { integer: true });
        break;
      case '--bind': {
        const spec = takeValue();
        const m = /^([^=]+)=(.+)$/.exec(spec);
        if (!m) throw new EquivError(`--bind expects NAME=v1,v2,..., got '${spec}'`);
        const sizes = parseNumberList(`--bind ${m[1]}`, m[2], { integer: true });
        if (sizes.some((s) => s < 0)) throw new EquivError(`--bind ${m[1]}: sizes must be >= 0`);
        options.bind[m[1]] = sizes;
        break;
      }
      case '--default-dim': {
        const [d] = parseNumberList(arg, takeValue(), { integer: true, count: 1 });
        if (d < 0) throw new EquivError('--default-dim must be >= 0');
        options.defaultDim = d;
        break;
      }
      case '--rtol':
      case '--atol': {
        const [t] = parseNumberList(arg, takeValue(), { count: 1 });
        if (t < 0) throw new EquivError(`${arg} must be >= 0`);
        options[arg.slice(2)] = t;
        break;
      }
      case '--int-range': {
        const r = parseNumberList(arg, takeValue(), { integer: true, count: 2 });
        if (r[1] <= r[0]) throw new EquivError(`--int-range LO,HI needs LO < HI`);
        options.intRange = r;
        break;
      }
      case '--float-range': {
        const r = parseNumberList(arg, takeValue(), { count: 2 });
        if (r[1] < r[0]) throw new EquivError(`--float-range LO,HI needs LO <= HI`);
        options.floatRange = r;
        break;
      }
      case '--values': {
        const spec = takeValue();
        const m = /^([^=]+)=(.+)$/.exec(spec);
        if (!m) throw new EquivError(`--values expects NAME=v1,v2,..., got '${spec}'`);
        options.values[m[1]] = parseValues(`--values ${m[1]}`, m[2]);
        break;
      }
      case '--exact':
        options.exact = true;
        break;
      case '--no-optimize':
        options.optimize = false;
        break;
      case '--threads': {
        const [t] = parseNumberList(arg, takeValue(), { integer: true, count: 1 });
        if (t < 1) throw new EquivError('--threads must be >= 1');
        options.threads = t;
        break;
      }
      default:
        if (arg.startsWith('-') && arg !== '-') throw new EquivError(`unknown option ${arg}`);
        files.push(arg);
    }
    return false;
  });
  if (help) return { help: true };
  if (files.length !== 2) throw new EquivError(`expected two model files, got ${files.length}`);
  return { files, options };
}

// The command-line front of a tool: `parse(argv)` gives its arguments or {help: true},
// and throws an EquivError on bad usage. Returns {args}, or {exit} when the run ends here
// (usage printed).
function parseCommandLine(name, usage, parse, argv, out, err) {
  let args;
  try {
    args = parse(argv);
  } catch (e) {
    if (!(e instanceof EquivError)) throw e;
    err.write(`${name}: ${e.message}\n${usage}\n`);
    return { exit: 2 };
  }
  if (args.help) {
    out.write(`${usage}\n`);
    return { exit: 0 };
  }
  return { args };
}

// The CLI. Returns the exit status; writes to the given streams (for tests).
async function main(argv, out = process.stdout, err = process.stderr) {
  const { args: parsed, exit } = parseCommandLine('equiv', USAGE, parseArgs, argv, out, err);
  if (!parsed) return exit;
  const [fileA, fileB] = parsed.files;
  const { options } = parsed;
  const pair = `${fileA} vs ${fileB}`;
  if (!options.quiet) {
    options.onRun = (run) => {
      const verdict = run.runtimeOnly ? `OK (${RUNTIME_ONLY}: ${run.runtimeOnly})` : run.ok ? 'OK' : `MISMATCH ${run.detail}`;
      out.write(`${run.label}: ${verdict}\n`);
    };
  }
  let result;
  try {
    result = await compareModels(fileA, fileB, options);
  } catch (e) {
    if (!(e instanceof EquivError)) throw e;
    err.write(`equiv: error: ${e.file ? `${e.file}: ` : ''}${e.message}\n`);
    return 2;
  }
  if (result.unusedBindings.length > 0 && !options.quiet) {
    err.write(`equiv: warning: no input dim is named ${result.unusedBindings.join(', ')} (--bind ignored)\n`);
  }
  if (result.runs.length === 0 && !result.ok) {
    // The signatures differ in their inputs, so nothing was run.
    out.write(`equiv: MISMATCH ${pair}: ${result.signatureDiffs.join('; ')}\n`);
    return 1;
  }
  const failed = result.runs.filter((r) => !r.ok);
  if (failed.length === 0) {
    const n = result.runs.length;
    const runtime = result.runs.filter((r) => r.runtimeOnly).length;
    const note = runtime ? ` (${runtime} only without ONNX Runtime's graph optimizations)` : '';
    out.write(`equiv: OK ${pair}: ${n === 1 ? '1 run agrees' : `${n} runs agree`}${note}\n`);
    return 0;
  }
  out.write(
    `equiv: MISMATCH ${pair}: ${failed.length} of ${result.runs.length} runs differ; ` +
      `first: ${failed[0].label}: ${failed[0].detail}\n`,
  );
  return 1;
}

// Runs a tool's `main(argv)` as the process: its result is the exit status, and an
// exception that escapes is an internal error (exit 2), printed with its stack.
function runMain(name, main) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`${name}: internal error: ${e && e.stack ? e.stack : e}\n`);
      process.exitCode = 2;
    },
  );
}

module.exports = {
  runMain,
  loadOrt: ort,
  parseCommandLine,
  forEachArgument,
  compareModels,
  compareTensors,
  loadModel,
  parseArgs,
  expandBindings,
  resolveShapes,
  signatureDifferences,
  randomTensor,
  chosenTensor,
  mulberry32,
  streamSeed,
  floatToHalf,
  halfToFloat,
  main,
  EquivError,
  TOLERANCES,
  DEFAULTS,
};

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      process.stderr.write(`equiv: internal error: ${oneLine(e && e.stack ? e.stack : e)}\n`);
      process.exitCode = 2;
    },
  );
}
