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
//
// ONNX Runtime may crash outright on a fuzz input (a segmentation fault running `Max(x, "")`,
// an input a function call left out, found by CI's differential run): the inputs are
// checked in a worker process, and where it dies, the input it was at is run alone in a
// probe process. An input that crashes the runtime by itself does not run (its written
// models are counted as not run); one that runs where a written model crashed the
// runtime is a finding. The worker then goes on from the next input.

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
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

// One input (FOLDER/HASH.input.onnx) and its written models: adds to `count`, prints findings.
async function checkInput(folder, files, input, count) {
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

function newCount() {
  return { written: 0, agree: 0, skipped: 0, given: 0, outside: 0, findings: 0 };
}

// The worker: inputs[from..] in order, each announced before it is checked and its counts
// printed after, for the parent to read.
async function worker(folder, from, max) {
  const files = fs.readdirSync(folder).sort();
  const inputs = files.filter((f) => f.endsWith('.input.onnx')).slice(0, max);
  for (let i = from; i < inputs.length; i++) {
    process.stdout.write(`runtime_facts_worker: start ${i}\n`);
    const count = newCount();
    await checkInput(folder, files, inputs[i], count);
    process.stdout.write(`runtime_facts_worker: done ${i} ${JSON.stringify(count)}\n`);
  }
  return 0;
}

// Runs one worker from input `from`; resolves to the index of the input it died at, killed
// by a signal (-1: it finished them all). Any other failure of the worker is an error.
function runWorker(folder, from, max, count) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [__filename, '--worker', folder, String(from), String(max)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let at = -1;
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const start = /^runtime_facts_worker: start (\d+)$/.exec(line);
      const done = /^runtime_facts_worker: done (\d+) (.*)$/.exec(line);
      if (start) {
        at = Number(start[1]);
      } else if (done) {
        for (const [k, v] of Object.entries(JSON.parse(done[2]))) count[k] += v;
        at = -1;
      } else {
        process.stdout.write(`${line}\n`);
      }
    });
    child.on('close', (code, signal) => {
      if (signal && at >= 0) resolve(at);
      else if (code === 0) resolve(-1);
      else reject(new Error(`the worker from input ${from} ended with ${signal || `status ${code}`}`));
    });
  });
}

// Whether ONNX Runtime crashes (dies by a signal) running FILE alone.
function crashes(file) {
  const r = spawnSync(process.execPath, [__filename, '--probe', file], { stdio: 'ignore' });
  return r.signal !== null || r.status > 2;
}

async function main(argv) {
  if (argv[0] === '--worker') return worker(argv[1], Number(argv[2]), Number(argv[3]));
  if (argv[0] === '--probe') return (await check(argv[1])).code;
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
  const count = newCount();
  let crashed = 0;
  for (let from = 0; from < inputs.length;) {
    const died = await runWorker(folder, from, max, count);
    if (died < 0) break;
    // The worker died at input `died`: ONNX Runtime crashed on it or on a written model.
    crashed++;
    const input = inputs[died];
    const hash = input.slice(0, -'.input.onnx'.length);
    const written = files.filter((f) => f.startsWith(`${hash}.`) && f !== input);
    count.written += written.length;
    if (crashes(path.join(folder, input))) {
      count.skipped += written.length;
    } else {
      process.stdout.write(`runtime_facts: FINDING ONNX Runtime crashes on a written model of ${input}, which runs\n`);
      count.findings++;
    }
    from = died + 1;
  }
  process.stdout.write(
    `runtime_facts: ${inputs.length} inputs, ${count.written} written models: ${count.agree} agree with ONNX Runtime, ` +
      `${count.skipped} not run (the input does not run either), ${count.given} declaring what the input declares ` +
      `as falsely, ${count.outside} outside the assumptions they record at both bindings, ${count.findings} findings` +
      (crashed ? ` (ONNX Runtime crashed on ${crashed} inputs' models)` : '') + '\n',
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
