#!/usr/bin/env node
'use strict';
// Dim-param oracle: checks the dim_param texts of a model onnx-infer-shapes wrote against
// the model it was given, as DESIGN.md's "What a written model may hold" asks: every
// dim_param of the output, wherever a type holds it (graph values, subgraphs, functions'
// value_info, sequence/optional/map elements; onnx_proto.js's forEachTypedValue), must be
//   (a) a name of the model: a dim_param anywhere in the input's types, or in the output's
//       main-graph inputs (a renamed input dim), that one printable ASCII;
//   (b) a name shapeprop mints: dyn__N or unk__N (N digits); or
//   (c) an expression in the grammar of docs/dims.md (integers, identifiers, + - *,
//       floor(.../c) with c >= 2, min(a,b), max(a,b)) all of whose identifiers are (a) or
//       (b).
// A character outside printable ASCII in a text that is not (a) is an offence of its own:
// internal markers (the ONNX-inference bridge's "\x01" tokens) must never leave the
// analysis. Whether one name is one size everywhere is not asked here (ort_types.js asks
// it of the tensors ONNX Runtime can return).
//
//   node tools/equiv/dim_params.js INPUT.onnx OUTPUT.onnx
//
// Prints one line per offence. Exit status: 0 none, 1 some, 2 usage error or a file that
// cannot be read or decoded.

const fs = require('node:fs');
const { forEachTypedValue, dimsOfType } = require('./onnx_proto');
const { parseCommandLine, forEachArgument, runMain, EquivError } = require('./equiv');

const USAGE = `usage: node dim_params.js INPUT.onnx OUTPUT.onnx
  INPUT.onnx   the model onnx-infer-shapes was given
  OUTPUT.onnx  the model it wrote
exit status: 0 every dim_param of OUTPUT is a name of the model, a fresh name or an
expression over those; 1 some is not (one line each); 2 usage error or unreadable input`;

const FRESH = /^(dyn|unk)__[0-9]+$/;
const INT64_MAX = (1n << 63n) - 1n;

// A text for messages: printable ASCII as it is, anything else escaped (\xNN, \u{N}).
function quote(text) {
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0);
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else if (c < 0x100) out += `\\x${c.toString(16).padStart(2, '0')}`;
    else out += `\\u{${c.toString(16)}}`;
  }
  return `"${out}"`;
}

function isPrintableAscii(text) {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c >= 0x7f) return false;
  }
  return true;
}

// Parses `text` as docs/dims.md's grammar (no spaces; the grammar shapeprop's DimParser
// in src/ir/dim.cc reads):
//   sum     := ['-'] term (('+' | '-') term)*
//   term    := number ['*' factor ('*' factor)*] | factor ('*' factor)*
//   factor  := identifier
//            | 'floor(' (identifier | extreme | '(' sum ')') '/' number ')'
//            | extreme
//   extreme := 'min(' sum ',' sum ')' | 'max(' sum ',' sum ')'
// identifiers [A-Za-z_][A-Za-z0-9_]*, numbers decimal and within int64, a floor's divisor
// 2 or more. Returns the identifiers it mentions (each once, in order); throws a
// SyntaxError saying what is wrong where when the text is not in the grammar.
function parseDimExpression(text) {
  let pos = 0;
  const identifiers = new Set();
  const fail = (what) => {
    throw new SyntaxError(`${what} at offset ${pos} of ${quote(text)}`);
  };
  const eat = (s) => {
    if (!text.startsWith(s, pos)) return false;
    pos += s.length;
    return true;
  };
  const expect = (s) => eat(s) || fail(`'${s}' expected`);
  const isDigit = (c) => c >= '0' && c <= '9';
  const isAlpha = (c) => (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c === '_';
  const atDigit = () => pos < text.length && isDigit(text[pos]);

  const number = () => {
    const start = pos;
    while (atDigit()) pos++;
    if (pos === start) fail('a number expected');
    const value = BigInt(text.slice(start, pos));
    if (value > INT64_MAX) fail('a number beyond int64');
    return value;
  };
  const identifier = () => {
    if (pos >= text.length || !isAlpha(text[pos])) fail('an identifier expected');
    const start = pos++;
    while (pos < text.length && (isAlpha(text[pos]) || isDigit(text[pos]))) pos++;
    identifiers.add(text.slice(start, pos));
  };
  // min(a,b) or max(a,b) when one starts here; false when none does.
  const extreme = () => {
    if (!eat('min(') && !eat('max(')) return false;
    sum();
    expect(',');
    sum();
    expect(')');
    return true;
  };
  const factor = () => {
    if (extreme()) return;
    if (eat('floor(')) {
      if (eat('(')) {
        sum();
        expect(')');
      } else if (!extreme()) {
        identifier();
      }
      expect('/');
      if (number() < 2n) fail('a divisor below 2');
      expect(')');
      return;
    }
    identifier();
  };
  const term = () => {
    if (atDigit()) {
      number();
      if (!eat('*')) return;
    }
    do factor();
    while (eat('*'));
  };
  function sum() {
    eat('-');
    term();
    while (eat('+') || eat('-')) term();
  }

  sum();
  if (pos !== text.length) fail('unexpected text');
  return [...identifiers];
}

// Every dim_param of a model's types: [{param, where, role, name, path, main}].
function dimParams(bytes) {
  const out = [];
  forEachTypedValue(bytes, (v) => {
    for (const { dim, path } of dimsOfType(v.type)) {
      if (dim.param !== undefined) out.push({ param: dim.param, where: v.where, role: v.role, name: v.name, path, main: v.main });
    }
  });
  return out;
}

// What is wrong with one dim_param of the output given the names of the model: '' when
// nothing is.
function offence(param, names) {
  if (names.has(param) || FRESH.test(param)) return '';
  if (!isPrintableAscii(param)) return 'holds a character outside printable ASCII';
  let identifiers;
  try {
    identifiers = parseDimExpression(param);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    return `is neither a dim name of the input, a fresh name (dyn__N, unk__N) nor an expression of docs/dims.md (${e.message})`;
  }
  const foreign = identifiers.filter((id) => !names.has(id) && !FRESH.test(id));
  if (foreign.length === 0) return '';
  const list = foreign.map((id) => `'${id}'`).join(', ');
  return identifiers.length === 1 && identifiers[0] === param
    ? 'is not a dim name of the input nor a fresh name (dyn__N, unk__N)'
    : `is an expression over ${list}, ${foreign.length === 1 ? 'which is' : 'which are'} not a dim name of the input nor a fresh name`;
}

// Every dim_param of a model's types, or an Error naming `which` model did not decode.
function dimParamsOf(bytes, which) {
  try {
    return dimParams(bytes);
  } catch (e) {
    throw Object.assign(new Error(`the ${which} model: ${e.message}`), { which, detail: e.message });
  }
}

// The dim_params of `outputBytes` (a model onnx-infer-shapes wrote) that the model it was
// given (`inputBytes`) does not allow: [{param, where, role, name, path, problem, text}],
// `text` the offence on one line. Throws an Error (its `which` 'input' or 'output') when
// either does not decode.
function dimParamOffences(inputBytes, outputBytes) {
  const names = new Set(dimParamsOf(inputBytes, 'input').map((d) => d.param));
  const written = dimParamsOf(outputBytes, 'output');
  // The output's main-graph inputs may rename the model's dims (printable names only:
  // a marker there is no name of the model either).
  for (const d of written) if (d.main && d.role === 'input' && d.param !== '' && isPrintableAscii(d.param)) names.add(d.param);
  const offences = [];
  for (const d of written) {
    const problem = offence(d.param, names);
    if (!problem) continue;
    offences.push({ ...d, problem, text: `${d.where}: ${d.role} '${d.name}' (${d.path}): dim_param ${quote(d.param)} ${problem}` });
  }
  return offences;
}

function parseArgs(argv) {
  const files = [];
  const help = forEachArgument(argv, (arg) => {
    if (arg === '-h' || arg === '--help') return true;
    if (arg.startsWith('-')) throw new EquivError(`unknown option ${arg}`);
    files.push(arg);
    return false;
  });
  if (help) return { help: true };
  if (files.length !== 2) throw new EquivError('expected the input model and the model written from it');
  return { files };
}

async function main(argv, out = process.stdout, err = process.stderr) {
  const { args, exit } = parseCommandLine('dim_params', USAGE, parseArgs, argv, out, err);
  if (!args) return exit;
  const [inputFile, outputFile] = args.files;
  let offences;
  try {
    offences = dimParamOffences(fs.readFileSync(inputFile), fs.readFileSync(outputFile));
  } catch (e) {
    const file = { input: inputFile, output: outputFile }[e.which];
    err.write(`dim_params: error: ${file ? `${file}: ${e.detail}` : e.message}\n`);
    return 2;
  }
  for (const o of offences) out.write(`${o.text}\n`);
  return offences.length ? 1 : 0;
}

module.exports = { dimParamOffences, parseDimExpression, dimParams, main };

if (require.main === module) runMain('dim_params', main);
