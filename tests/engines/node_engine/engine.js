#!/usr/bin/env node
// A small context engine that speaks ctxgauge's JSON-lines protocol (see src/ctxgauge/engines/command.py).
// Used by tests/engines/test_command.py to drive a REAL external process; no npm dependencies.
//
//   build    walk the corpus directory, write out/index.json: files sorted by path, content lowercased
//   query    score = occurrences of the query's terms in a file's content, ordered by (-score, path)
//   identity content hash of this file and its flags, or the id given by --declared-identity=ID
//   update   unsupported (answers {"ok":false,"error":"unsupported op: update"}) unless --support-update
//
// Misbehaviour the tests need, as flags on the command line or comma-separated in CTXGAUGE_TEST_ENGINE_FLAGS:
//   --hang-on=OP        never answer OP          --garbage-on=OP    answer OP with a line that is not JSON
//   --array-on=OP       answer OP with [1,2]     --no-ok-on=OP      answer OP with an object lacking "ok"
//   --exit-on=OP        write to stderr and exit 3 while handling OP
//   --absolute-paths    answer absolute paths    --dotdot-paths     answer paths starting with ../
//   --too-many          answer k+1 hits          --duplicate        repeat the first hit
//   --bad-score         scores as strings        --chatty           write 1 MiB to stderr before every answer
//   --no-identity       answer identity with ok:false
//   --twice-on=OP       answer OP twice      --update-fails     answer update with ok:false, "disk full"
//   --spans=S-E;S-E     give every hit these spans, as [{"start":S,"end":E},...] (the wire form)
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const readline = require('readline');

const FLAGS = process.argv.slice(2).concat(
  (process.env.CTXGAUGE_TEST_ENGINE_FLAGS || '').split(',').filter(Boolean));

function flag(name) {
  return FLAGS.includes(name);
}

function flagValue(name) {
  const hit = FLAGS.find((f) => f.startsWith(name + '='));
  return hit === undefined ? null : hit.slice(name.length + 1);
}

function send(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// Code-unit order equals byte order for the ASCII paths the tests use, and never depends on the locale.
function cmp(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

function walk(root, rel, out) {
  const entries = fs.readdirSync(path.join(root, rel), { withFileTypes: true });
  for (const e of entries) {
    const child = rel ? rel + '/' + e.name : e.name;
    if (e.isDirectory()) walk(root, child, out);
    else if (e.isFile()) out.push(child);
  }
  return out;
}

function build(req) {
  const files = walk(req.corpus, '', []).sort(cmp).map((p) => ({
    path: p,
    text: fs.readFileSync(path.join(req.corpus, p), 'utf8').toLowerCase(),
  }));
  fs.mkdirSync(req.out, { recursive: true });
  fs.writeFileSync(path.join(req.out, 'index.json'), JSON.stringify({ files }) + '\n');
  return { ok: true, documents: files.length, pid: process.pid, corpus: req.corpus };
}

function countOccurrences(hay, needle) {
  let n = 0;
  for (let i = hay.indexOf(needle); i !== -1; i = hay.indexOf(needle, i + needle.length)) n += 1;
  return n;
}

function query(req) {
  const index = JSON.parse(fs.readFileSync(path.join(req.out, 'index.json'), 'utf8'));
  const terms = String(req.text).toLowerCase().split(/[^a-z0-9_]+/).filter(Boolean);
  let hits = [];
  for (const f of index.files) {
    const score = terms.reduce((s, t) => s + countOccurrences(f.text, t), 0);
    if (score > 0) hits.push({ path: f.path, score });
  }
  hits.sort((a, b) => b.score - a.score || cmp(a.path, b.path));
  hits = hits.slice(0, req.k);
  if (flag('--absolute-paths')) hits = hits.map((h) => ({ path: path.join(req.out, h.path), score: h.score }));
  if (flag('--dotdot-paths')) hits = hits.map((h) => ({ path: '../' + h.path, score: h.score }));
  if (flag('--bad-score')) hits = hits.map((h) => ({ path: h.path, score: String(h.score) }));
  if (flag('--duplicate') && hits.length) hits.push(hits[0]);
  const spans = flagValue('--spans');
  if (spans !== null) {
    const wire = spans.split(';').map((se) => { const [s, e] = se.split('-').map(Number); return { start: s, end: e }; });
    hits = hits.map((h) => ({ path: h.path, score: h.score, spans: wire }));
  }
  if (flag('--too-many')) {
    while (hits.length <= req.k) hits.push({ path: 'padding-' + hits.length + '.txt', score: 0 });
  }
  return { ok: true, hits };
}

function identity() {
  if (flag('--no-identity')) return { ok: false, error: 'unsupported op: identity' };
  const declared = flagValue('--declared-identity');
  if (declared !== null) return { ok: true, identity: { id: declared, source: 'declared' } };
  // The flags change what the engine computes, so they enter its identity beside its source.
  const h = crypto.createHash('sha256');
  h.update(fs.readFileSync(__filename));
  h.update('\0' + JSON.stringify(FLAGS));
  return { ok: true, identity: { id: 'sha256:' + h.digest('hex'), source: 'content-hash' } };
}

function update(req) {
  if (flag('--update-fails')) return { ok: false, error: 'disk full' };
  if (!flag('--support-update')) return { ok: false, error: 'unsupported op: update' };
  // A full rebuild from the new corpus is a correct (if not clever) update.
  return Object.assign(build(req), { updated: true, changes: req.changes.length });
}

function handle(req) {
  const op = req.op;
  if (flag('--chatty')) process.stderr.write('x'.repeat(1 << 20) + '\n');
  if (flagValue('--hang-on') === op) return null;
  if (flagValue('--garbage-on') === op) return 'this is not json: the engine is confused';
  if (flagValue('--array-on') === op) return [1, 2];
  if (flagValue('--no-ok-on') === op) return { hits: [] };
  if (flagValue('--exit-on') === op) {
    process.stderr.write('engine.js: simulated crash during ' + op + '\n');
    process.exit(3);
  }
  switch (op) {
    case 'build': return build(req);
    case 'query': return query(req);
    case 'identity': return identity();
    case 'update': return update(req);
    default: return { ok: false, error: 'unsupported op: ' + op };
  }
}

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on('line', (line) => {
  if (!line.trim()) return;
  let answer;
  try {
    answer = handle(JSON.parse(line));
  } catch (err) {
    answer = { ok: false, error: String(err && err.message || err) };
  }
  if (answer === null) return;
  if (typeof answer === 'string') process.stdout.write(answer + '\n');
  else send(answer);
  if (flagValue('--twice-on') === JSON.parse(line).op) send(answer);
});
rl.on('close', () => process.exit(0));
