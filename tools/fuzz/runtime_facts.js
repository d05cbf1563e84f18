#!/usr/bin/env node
'use strict';
// The fuzzers' runtime oracle, second half (fuzz_support.h, save_for_runtime): every model
// the library wrote from a fuzz input (HASH.WHAT.onnx beside HASH.input.onnx in FOLDER) is
// run on ONNX Runtime, and each type it declares (graph outputs and value_info: the facts
// written) must be what the runtime computes, by tools/equiv/ort_types.js, at two bindings
// of the generator's symbolic dims N and M (others take 2). A written model that does not
// load or run where the input runs is a finding as well (a fact ONNX Runtime's own
// inference contradicts refuses the model at load), but for a type the input declares
// already, as falsely (the first value ort_types finds wrong is the same, declared the
// same, in both; or, where the input does not run, the input declares that value so).
// Inputs that ONNX Runtime cannot run
// (an op it lacks, a shape the random data breaks) are skipped and counted. ONNX Runtime
// is loaded once for the folder. A binding that breaks a condition the written model
// records (shapeprop.assumptions: "H >= 2", a window that fits) is not run for it, and a
// model whose every binding does is counted apart.
//
//   node tools/fuzz/runtime_facts.js FOLDER [--max N]
//
// Prints each finding and a summary. Exit status: 0 no finding, 1 some, 2 usage error.

const fs = require('node:fs');
const path = require('node:path');
const ortTypes = require('../equiv/ort_types');
const { decodeModel } = require('../equiv/onnx_proto');

const BINDINGS = ['--bind', 'N=2,3', '--bind', 'M=3,1', '--quiet'];

// A sink for ort_types' lines: the last one says what it found.
function sink() {
  const lines = [];
  return { write: (s) => lines.push(...String(s).split('\n').filter(Boolean)), lines };
}

// "VALUE: declared TYPE" of a MISMATCH line, the first value ort_types found wrong.
function declared(line) {
  const m = / (\S+): declared (\S+), ONNX Runtime gives (\S+)/.exec(line);
  return m ? `${m[1]} ${m[2]} ${m[3]}` : line;
}

// Whether the model given (FILE) itself declares, for the value a MISMATCH line names, the
// very type the line says the written model declares: a mutated input's own declaration
// of a value nothing proves (a NonZero's count), which annotation keeps, not a fact the
// library wrote. For inputs ONNX Runtime cannot run, whose own check says nothing.
function declaredByInput(file, line) {
  const m = / (\S+): declared (\S+), ONNX Runtime gives /.exec(line);
  if (!m) return false;
  let model;
  try {
    model = decodeModel(fs.readFileSync(file));
  } catch {
    return false;
  }
  const g = model.graph;
  return [...g.outputs, ...g.valueInfo].some((vi) => vi.name === m[1] && ortTypes.describeDeclared(vi.type) === m[2]);
}

async function check(file) {
  const out = sink();
  const code = await ortTypes.main([file, ...BINDINGS], out, out);
  return { code, line: out.lines[out.lines.length - 1] || '' };
}

async function main(argv) {
  let folder;
  let max = Infinity;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--max') max = Number(argv[++i]);
    else if (!folder && !argv[i].startsWith('-')) folder = argv[i];
    else {
      process.stderr.write('usage: node runtime_facts.js FOLDER [--max N]\n');
      return 2;
    }
  }
  if (!folder || !Number.isInteger(max) && max !== Infinity) {
    process.stderr.write('usage: node runtime_facts.js FOLDER [--max N]\n');
    return 2;
  }
  const files = fs.readdirSync(folder).sort();
  const inputs = files.filter((f) => f.endsWith('.input.onnx')).slice(0, max);
  const count = { written: 0, agree: 0, skipped: 0, given: 0, outside: 0, findings: 0 };
  for (const input of inputs) {
    const hash = input.slice(0, -'.input.onnx'.length);
    const written = files.filter((f) => f.startsWith(`${hash}.`) && f !== input);
    let inputRuns; // asked once, when a written model does not run
    for (const w of written) {
      count.written++;
      const file = path.join(folder, w);
      const r = await check(file);
      if (r.code === 0) {
        count.agree++;
        continue;
      }
      // Both bindings break a condition the written model records (shapeprop.assumptions:
      // a window that fits its padded input), so it states nothing of these runs.
      if (r.line.startsWith('ort_types: NOTHING RUN')) {
        count.outside++;
        continue;
      }
      if (r.code === 2) {
        if (inputRuns === undefined) inputRuns = (await check(path.join(folder, input))).code !== 2;
        if (!inputRuns) {
          count.skipped++;
          continue;
        }
        process.stdout.write(`runtime_facts: FINDING ${file}: does not run where ${input} runs: ${r.line}\n`);
      } else {
        // A type the model given declares already, and as falsely (a mutated input's own
        // declaration), is not one the library wrote.
        const given = await check(path.join(folder, input));
        if ((given.code === 1 && declared(given.line) === declared(r.line)) ||
            (given.code === 2 && declaredByInput(path.join(folder, input), r.line))) {
          count.given++;
          continue;
        }
        process.stdout.write(`runtime_facts: FINDING ${r.line}\n`);
      }
      count.findings++;
    }
  }
  process.stdout.write(
    `runtime_facts: ${inputs.length} inputs, ${count.written} written models: ${count.agree} agree with ONNX Runtime, ` +
      `${count.skipped} not run (the input does not run either), ${count.given} declaring what the input declares ` +
      `as falsely, ${count.outside} outside the assumptions they record at both bindings, ${count.findings} findings\n`,
  );
  return count.findings ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`runtime_facts: internal error: ${e && e.stack ? e.stack : e}\n`);
    process.exitCode = 2;
  },
);
