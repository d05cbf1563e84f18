#!/usr/bin/env node
'use strict';
// The rules of schemas/ checked against ONNX Runtime, which runs every op they describe.
//
//   node check_rules_on_ort.js --infer onnx-infer-shapes --cases DIR --schemas DIR --work DIR
//        [--extra-schemas DIR]   (passed on as --schemas DIR: a folder of rules to test)
//
// Each case (DIR/*.onnxtxt) is a model of one or a few nodes of the ops under test, with
// symbolic dims. It is annotated by onnx-infer-shapes (which must warn of nothing), then
// tools/equiv/ort_types.js runs it on ONNX Runtime at the bindings its "# ORT:" line gives
// (two or more) and compares every value's declared type with what ONNX Runtime
// produced; every value must be fully typed, except the values an "# ORT-PARTIAL:" line
// names (and those only in their dims). onnx-infer-shapes notes which layout of which
// rule each node took (--debug-analysis); every layout of every rule must be taken by
// some case, but those UNRUNNABLE lists with the reason.
//
// Exit status: 0 all agree and every layout is covered, 1 otherwise.

const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { checkTypes } = require('../../tools/equiv/ort_types');

// Rules ONNX Runtime's CPU build cannot run, with why; their layouts need no case.
const UNRUNNABLE = {
  'com.microsoft/GroupNorm.rule': "ONNX Runtime's CPU build has no GroupNorm kernel (CUDA and ROCm only)",
};
// Folders of such rules: ai.onnx's versions newer than the linked ONNX (issue 56), which the
// onnxruntime-node this check runs (1.30) does not register, nor 1.31.1 at opset 28; the
// goldens of tests/golden/versions check their facts on 1.31.1 and 1.30 instead, through
// the model relabelled to opset 26 (opset 27 on 1.31.1 itself).
const UNRUNNABLE_FOLDERS = {
  'onnx/opset27/': 'ai.onnx opset 27: checked by tests/golden/versions (onnxruntime-node 1.31.1)',
  'onnx/opset28/': 'ai.onnx opset 28, which no onnxruntime-node registers: checked by tests/golden/versions (relabelled to 26)',
};
function unrunnable(rule) {
  if (UNRUNNABLE[rule]) return UNRUNNABLE[rule];
  const folder = Object.keys(UNRUNNABLE_FOLDERS).find((f) => rule.startsWith(f));
  return folder ? UNRUNNABLE_FOLDERS[folder] : undefined;
}

function parseArgs(argv) {
  const o = {};
  for (let i = 0; i < argv.length; i += 2) o[argv[i].replace(/^--/, '')] = argv[i + 1];
  for (const k of ['infer', 'cases', 'schemas', 'work']) if (!o[k]) throw new Error(`--${k} is required`);
  return o;
}

// "# ORT: --bind B=1,3 --fill seqlens_k=S-1" -> ort_types options.
function caseOptions(text) {
  const opts = { bind: {}, fill: {}, partial: [] };
  for (const line of text.split('\n')) {
    let m = /^# ORT: (.*)$/.exec(line);
    if (m) {
      const words = m[1].trim().split(/\s+/);
      for (let i = 0; i < words.length; i += 2) {
        const [name, value] = words[i + 1].split('=');
        if (words[i] === '--bind') opts.bind[name] = value.split(',').map(Number);
        else if (words[i] === '--fill') opts.fill[name] = value;
        else throw new Error(`unknown option ${words[i]} in '${line}'`);
      }
    }
    m = /^# ORT-PARTIAL: (.*)$/.exec(line);
    if (m) opts.partial.push(...m[1].split(',').map((s) => s.trim()));
  }
  return opts;
}

// Every layout of every rule: "com.microsoft/Gelu.rule:6" for a 'layout' at line 6.
function allLayouts(schemasDir) {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.rule')) {
        const rel = path.relative(schemasDir, p).split(path.sep).join('/');
        fs.readFileSync(p, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (/^layout\b/.test(line)) out.push(`${rel}:${i + 1}`);
          });
      }
    }
  };
  walk(schemasDir);
  return out;
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  fs.mkdirSync(o.work, { recursive: true });
  const covered = new Set();
  const failures = [];
  const cases = fs.readdirSync(o.cases).filter((f) => f.endsWith('.onnxtxt')).sort();
  for (const c of cases) {
    const file = path.join(o.cases, c);
    const text = fs.readFileSync(file, 'utf8');
    const opts = caseOptions(text);
    if (Object.keys(opts.bind).length && Object.values(opts.bind).every((v) => v.length < 2))
      failures.push(`${c}: the ORT line binds each symbol to fewer than two sizes`);
    const out = path.join(o.work, c.replace(/\.onnxtxt$/, '.onnx'));
    const extra = o['extra-schemas'] ? ['--schemas', o['extra-schemas']] : [];
    const run = spawnSync(o.infer, [file, '--debug-analysis', ...extra, '-o', out], { encoding: 'utf8' });
    if (run.status !== 0) {
      failures.push(`${c}: onnx-infer-shapes exited ${run.status}: ${run.stderr.trim().split('\n')[0]}`);
      continue;
    }
    const stderr = run.stderr;
    const problems = stderr.split('\n').filter((l) => /: (warning|error): /.test(l));
    if (problems.length) failures.push(`${c}: ${problems[0]}`);
    for (const m of stderr.matchAll(/rule layout '[^']*' at schemas\/([^:]+:\d+):\d+/g)) covered.add(m[1]);
    let r;
    try {
      r = await checkTypes(out, { bind: opts.bind, fill: opts.fill });
    } catch (e) {
      failures.push(`${c}: ${e.message}`);
      continue;
    }
    const partial = [...r.partial].filter((n) => !opts.partial.includes(n));
    const runs = r.runs.map((run) => run.label).join(' | ');
    if (!r.ok) failures.push(`${c}: ${r.runs.find((run) => run.problems.length).problems[0]}`);
    else if (r.untyped.length) failures.push(`${c}: no type for ${r.untyped.join(', ')}`);
    else if (partial.length) failures.push(`${c}: unknown dims in ${partial.join(', ')}`);
    else console.log(`ok   ${c}: ${r.values} values agree with ONNX Runtime at ${runs}`);
  }
  for (const layout of allLayouts(o.schemas)) {
    const rule = layout.replace(/:\d+$/, '');
    if (covered.has(layout)) continue;
    const why = unrunnable(rule);
    if (why) {
      console.log(`skip ${layout}: ${why}`);
      continue;
    }
    failures.push(`layout at schemas/${layout} is taken by no case`);
  }
  for (const f of failures) console.log(`FAIL ${f}`);
  console.log(failures.length ? `${failures.length} failures` : `all ${cases.length} cases agree with ONNX Runtime; every runnable layout is covered`);
  return failures.length ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    console.error(`check_rules_on_ort: ${e.stack || e}`);
    process.exitCode = 2;
  },
);
