#!/usr/bin/env node
'use strict';
// One model of the real-export corpus (tests/data/real-exports) through every mode of
// onnx-infer-shapes, as ctest realexports.<model> runs it:
//
//   node check_model.js TOOL FLATTEN MODEL.onnx
//
// TOOL is onnx-infer-shapes, FLATTEN realexports-flatten (flatten.cc beside this file).
// The model's folder holds runs.json (two bindings of every symbolic input dim, the range
// of integer inputs) and baselines.json (what ONNX's InferShapes and ORT's symbolic
// inference truly determine). First a note: whether the exporter's own declarations hold
// against ORT's runtime shapes (what the check mode must find). Then the checks, each
// reported on a line of its own:
//   check             --mode check exits 0 when every declaration holds, and 1 when the
//                     exporter declared a false one, but for the models check_gaps.json
//                     (beside this file) names: false declarations that nothing in the
//                     graph proves false, where it must still exit 0 (a gap closed is
//                     taken off the list);
//   M exit            for M in annotate, specialize, inline: `--mode M` exits 0;
//   M full-check      its output passes ONNX's full checker (--verify-full-check);
//   M equal           its output computes what the model does on ONNX Runtime, at both
//                     bindings (tools/equiv/equiv.js);
//   M types           no declared or annotated type of its output (graph values and,
//                     through FLATTEN, those inside functions) disagrees with ORT's
//                     runtime shapes at either binding (tools/equiv/ort_types.js);
//   M dim-params      every dim_param of its output (graph, subgraphs, functions, sequence
//                     elements) is a dim name of the model, a fresh name (dyn__N, unk__N)
//                     or an expression over those (tools/equiv/dim_params.js);
//   coverage          the annotation covers the baselines (tools/equiv/coverage.js): ONNX's
//                     InferShapes, ORT's symbolic inference, onnx-shape-inference and
//                     OnnxSlim's shape inference, both of the model as exported and of the
//                     model without its value_info (as the baselines see it: what each tool
//                     derives from the graph), but for what peer_exceptions.json (beside
//                     this file) accepts with its reason, each of which must still apply.
// Values inside subgraphs (If/Loop bodies) are not reached: ORT cannot output them.
// Prints "FAIL NAME: first line of the error" or "PASS NAME" per check and a last line
// "N passed, M failed"; exits 1 when any check fails, 2 on a usage error.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const equiv = require('../../tools/equiv/equiv');
const { decodeModel, withoutValueInfo } = require('../../tools/equiv/onnx_proto');
const types = require('../../tools/equiv/ort_types');
const coverage = require('../../tools/equiv/coverage');
const { dimParamOffences } = require('../../tools/equiv/dim_params');

const MODES = ['annotate', 'specialize', 'inline'];

function firstLine(text) {
  return (
    String(text)
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') || '(no message)'
  );
}

function runOptions(dir, file) {
  const runs = JSON.parse(fs.readFileSync(path.join(dir, 'runs.json'), 'utf8'));
  const origin = JSON.parse(fs.readFileSync(path.join(dir, 'origin.json'), 'utf8'));
  const entry = origin.files[file];
  if (!entry) throw new Error(`${file} is not in origin.json`);
  const spec = { ...runs.default, ...(runs.models[entry.model] || {}) };
  // Only the symbols the model's inputs carry, so that the runs are labelled by them.
  const carried = new Set();
  for (const vi of decodeModel(fs.readFileSync(path.join(dir, file))).feedInputs) {
    for (const d of (vi.type.shape || [])) if (d.param !== undefined) carried.add(d.param);
  }
  const bind = Object.fromEntries(Object.entries(spec.bind).filter(([k]) => carried.has(k)));
  return { bind, intRange: spec.int_range };
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 120000, maxBuffer: 64 << 20 });
  if (r.error) return { status: -1, stderr: String(r.error.message) };
  return { status: r.status === null ? `signal ${r.signal}` : r.status, stderr: r.stderr || '' };
}

async function main(argv) {
  if (argv.length !== 3) {
    process.stderr.write('usage: node check_model.js TOOL FLATTEN MODEL.onnx\n');
    return 2;
  }
  const [tool, flatten, model] = argv;
  const dir = path.dirname(path.resolve(model));
  const file = path.basename(model);
  const opts = runOptions(dir, file);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shapeprop-realexports-'));
  const results = [];
  const report = (name, problem) => {
    results.push({ name, problem });
    process.stdout.write(problem ? `FAIL ${name}: ${problem}\n` : `PASS ${name}\n`);
  };

  // The types a model declares (graph values, and inside functions once flattened),
  // against ORT's runtime shapes: '' when they hold, else the first false one.
  const falseTypes = async (onnxFile, tag) => {
    const flat = path.join(work, `${tag}.flat.onnx`);
    const f = run(flatten, [onnxFile, flat]);
    if (f.status !== 0) return `flattening failed: ${firstLine(f.stderr)}`;
    try {
      const r = await types.checkTypes(flat, { bind: opts.bind, intRange: opts.intRange, seed: 1 });
      if (r.ok) return '';
      const problems = r.runs.flatMap((x) => x.problems.map((p) => `${x.label}: ${p}`));
      return `${problems.length} false: ${problems[0]}`;
    } catch (e) {
      return `the type oracle failed: ${firstLine(e.message)}`;
    }
  };

  // The annotation against the baselines, as the model is (`annotated`) and from the graph
  // alone, as the baselines were made (the model without its value_info, annotated).
  const coverageProblems = (annotated) => {
    const baselines = path.join(dir, 'baselines.json');
    const bare = path.join(work, 'bare.onnx');
    fs.writeFileSync(bare, withoutValueInfo(fs.readFileSync(model)));
    const bareAnnotated = path.join(work, 'bare.annotated.onnx');
    const r = run(tool, [bare, '-o', bareAnnotated, '-q']);
    if (r.status !== 0) return `annotating the model without its value_info failed: ${firstLine(r.stderr)}`;
    try {
      // What a peer knows more that is known and accepted (peer_exceptions.json, beside
      // this file), each of which must still show in one of the two.
      const listed = JSON.parse(fs.readFileSync(path.join(__dirname, 'peer_exceptions.json'), 'utf8')).models[file] || {};
      const excused = Object.fromEntries(Object.entries(listed).map(([peer, e]) => [peer, e.values]));
      const bareR = coverage.compareCoverage(bareAnnotated, baselines, file, excused);
      const asR = coverage.compareCoverage(annotated, baselines, file, excused);
      const seen = new Set([...bareR.excused, ...asR.excused]);
      const stale = Object.entries(excused).flatMap(([peer, vs]) => vs.map((v) => `${peer}:${v}`)).filter((x) => !seen.has(x));
      const problems = [
        ...bareR.problems.map((p) => `from the graph alone: ${p}`),
        ...asR.problems.map((p) => `as exported: ${p}`),
        ...stale.map((x) => `peer_exceptions.json lists ${x}, which no longer knows more: take it off the list`),
      ];
      return problems.length ? `${problems.length} problems; first: ${problems[0]}` : '';
    } catch (err) {
      return firstLine(err.message);
    }
  };

  // The dim_params of a mode's output against the model's: '' when all are allowed.
  const dimParamProblems = (out) => {
    try {
      const offences = dimParamOffences(fs.readFileSync(model), fs.readFileSync(out));
      return offences.length ? `${offences.length} not of the model; first: ${offences[0].text}` : '';
    } catch (err) {
      return `the dim-param oracle failed: ${firstLine(err.message)}`;
    }
  };

  try {
    // What the exporter declared is not ours to fix: a note, and what check must find.
    const declared = await falseTypes(model, 'declared');
    process.stdout.write(declared ? `NOTE the exporter's declarations: ${declared}\n` : "NOTE the exporter's declarations hold\n");

    const check = run(tool, ['--mode', 'check', '-q', model]);
    const gap = JSON.parse(fs.readFileSync(path.join(__dirname, 'check_gaps.json'), 'utf8')).models[file];
    if (declared === '' || declared.startsWith('flattening') || declared.startsWith('the type oracle')) {
      report('check', check.status === 0 ? '' : `exit ${check.status}: ${firstLine(check.stderr)}`);
    } else if (gap) {
      process.stdout.write(`NOTE a known gap of the check (check_gaps.json): ${gap}\n`);
      report('check', check.status === 0 ? '' : `exit ${check.status}: check_gaps.json says it cannot tell, take ${file} off it`);
    } else {
      report('check', check.status === 1 ? '' : `exit ${check.status}, but the model declares a false type (${declared})`);
    }

    for (const mode of MODES) {
      const out = path.join(work, `${mode}.onnx`);
      const r = run(tool, ['--mode', mode, model, '-o', out, '--verify-full-check', '-q']);
      if (r.status !== 0) {
        // Was it the run, or the full check of what it would write?
        const plain = run(tool, ['--mode', mode, model, '-o', out, '-q']);
        if (plain.status !== 0) {
          report(`${mode} exit`, `exit ${plain.status}: ${firstLine(plain.stderr)}`);
          const none = `no output: --mode ${mode} failed`;
          for (const check of ['full-check', 'equal', 'types', 'dim-params']) report(`${mode} ${check}`, none);
          if (mode === 'annotate') report('coverage', none);
          continue;
        }
        report(`${mode} exit`, '');
        report(`${mode} full-check`, firstLine(r.stderr));
      } else {
        report(`${mode} exit`, '');
        report(`${mode} full-check`, '');
      }
      try {
        const e = await equiv.compareModels(model, out, { bind: opts.bind, seeds: [1], intRange: opts.intRange });
        const bad = e.runs.find((x) => !x.ok);
        report(`${mode} equal`, e.ok ? '' : bad ? `${bad.label}: ${bad.detail}` : e.signatureDiffs.join('; '));
      } catch (err) {
        report(`${mode} equal`, `${err.file === out ? 'the output' : 'the model'} does not run: ${firstLine(err.message)}`);
      }
      report(`${mode} types`, await falseTypes(out, mode));
      report(`${mode} dim-params`, dimParamProblems(out));
      if (mode === 'annotate') report('coverage', coverageProblems(out));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  const failed = results.filter((r) => r.problem).length;
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  return failed ? 1 : 0;
}

equiv.runMain('check_model', main);
