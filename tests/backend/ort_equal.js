#!/usr/bin/env node
'use strict';
// backend.all_modes_equal_on_ort: every model of ONNX's backend test sets given (simple,
// light, pytorch-converted, pytorch-operator) through annotate, specialize and inline,
// and each output run on ONNX Runtime beside its input with random inputs of the declared
// types (two seeds; unknown and symbolic dims of size 2): the outputs must agree.
// The declared types constrain nothing else: a shape or index input takes whatever
// values the generator draws, so that a rewrite taking a declared output for a fact
// (test_expand_shape_model4) shows. A model whose input does not load or run with such
// data, or that the tool refuses as bad input in every mode, is skipped and counted.
// With --each-pass, the runs are each pass alone (--passes NAME, for every name that
// TOOL --list-passes prints) instead of the three modes: a pass must keep the outputs
// whatever ran before it (repo.each_pass_alone_equal_on_ort, over the corpus and the
// real exports).
//
//   node tests/backend/ort_equal.js [--each-pass] TOOL DIR...
// Exit status: 0 every output agrees, 1 one does not, 2 usage error or no model found.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const equiv = require('../../tools/equiv/equiv');

// The runs: [label, arguments].
function runsOf(tool, eachPass) {
  if (!eachPass) return ['annotate', 'specialize', 'inline'].map((m) => [m, ['--mode', m]]);
  const r = spawnSync(tool, ['--list-passes'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${tool} --list-passes: exit ${r.status}`);
  const names = r.stdout.split('\n').filter((l) => l.trim()).map((l) => l.split(/\s+/)[0]);
  if (names.length === 0) throw new Error(`${tool} --list-passes lists no pass`);
  return names.map((p) => [`--passes ${p}`, ['--passes', p]]);
}

function modelsUnder(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...modelsUnder(p));
    else if (entry.isFile() && entry.name.endsWith('.onnx')) out.push(p);
  }
  return out.sort();
}

function firstLine(text) {
  return String(text).split('\n').find((l) => l.trim() !== '') || '';
}

async function main(argv) {
  const eachPass = argv[0] === '--each-pass';
  if (eachPass) argv = argv.slice(1);
  if (argv.length < 2) {
    process.stderr.write('usage: node ort_equal.js [--each-pass] TOOL DIR...\n');
    return 2;
  }
  const [tool, ...dirs] = argv;
  const runs = runsOf(tool, eachPass);
  const models = dirs.flatMap(modelsUnder);
  if (models.length === 0) {
    process.stderr.write('no model found\n');
    return 2;
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shapeprop-backend-'));
  let equal = 0;
  let skipped = 0;
  const failures = [];
  try {
    for (const model of models) {
      const name = path.relative(path.dirname(path.dirname(model)), model);
      for (const [mode, args] of runs) {
        const out = path.join(work, 'out.onnx');
        fs.rmSync(out, { force: true });
        const r = spawnSync(tool, [...args, model, '-o', out, '-q'], { encoding: 'utf8' });
        if (r.status === 2) {  // bad input: nothing to compare
          skipped++;
          continue;
        }
        if (r.status !== 0) {
          failures.push(`${name} (${mode}): exit ${r.status}: ${firstLine(r.stderr)}`);
          continue;
        }
        try {
          const e = await equiv.compareModels(model, out, { seeds: [1, 2], defaultDim: 2, bind: [] });
          if (e.ok) {
            equal++;
          } else {
            const bad = e.runs.find((x) => !x.ok);
            failures.push(`${name} (${mode}): ${bad ? `${bad.label}: ${bad.detail}` : e.signatureDiffs.join('; ')}`);
          }
        } catch (err) {
          if (err.file === model) skipped++;  // the input itself does not run on such data
          else failures.push(`${name} (${mode}): the output does not run: ${firstLine(err.message)}`);
        }
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  for (const f of failures) process.stdout.write(`FAIL ${f}\n`);
  process.stdout.write(`${equal} equal, ${failures.length} failed, ${skipped} skipped (${models.length} models, ${runs.length} ${eachPass ? 'passes' : 'modes'})\n`);
  return failures.length ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => process.exit(code), (err) => {
  process.stderr.write(`ort_equal: ${err.stack || err}\n`);
  process.exit(2);
});
