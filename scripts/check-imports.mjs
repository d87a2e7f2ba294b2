#!/usr/bin/env node
/**
 * npm run check:imports — the import graph of lib/, type-only imports included: file cycles,
 * and pairs of sibling folders that import each other (a folder and its own subfolder are one
 * part: the parent holds the part's entry and orchestration), and two rules of the runtime wing:
 * a runtime under engine/runtime imports no sibling runtime's folder (`local`, the local-runtime
 * base that process, sandbox and scripted build on, aside), and engine/linux, the Linux floor the
 * runtimes share, imports nothing but itself and the engine-api vocabulary. Exits 1 on any.
 * Written here rather than taken from madge/dpdm: neither is installed, and the rule (siblings,
 * type imports count) is ours.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const lib = resolve(import.meta.dirname, '../lib');
const files = readdirSync(lib, { recursive: true }).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts')).map((f) => join(lib, f));
const IMPORT = /(?:import|export)\s[^'"]*?from\s+'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;
const graph = new Map(files.map((f) => [f, new Set()]));
for (const file of files) {
  for (const m of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const target = resolve(dirname(file), (m[1] ?? m[2]).replace(/\.js$/, '.ts'));
    if (graph.has(target)) graph.get(target) && graph.get(file).add(target);
  }
}

// File cycles: strongly connected components (Tarjan) of more than one file, or a self-import.
let counter = 0;
const index = new Map(), low = new Map(), stack = [], onStack = new Set(), cycles = [];
function visit(v) {
  index.set(v, counter); low.set(v, counter); counter += 1; stack.push(v); onStack.add(v);
  for (const w of graph.get(v)) {
    if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
    else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const scc = [];
    let w;
    do { w = stack.pop(); onStack.delete(w); scc.push(w); } while (w !== v);
    if (scc.length > 1 || graph.get(v).has(v)) cycles.push(scc.map((f) => relative(lib, f)).sort());
  }
}
for (const f of files) if (!index.has(f)) visit(f);

// Sibling folders importing each other: compare the first differing folder of the two paths.
const folderEdges = new Map();
for (const [from, targets] of graph) {
  for (const to of targets) {
    const a = relative(lib, dirname(from)).split('/').filter(Boolean);
    const b = relative(lib, dirname(to)).split('/').filter(Boolean);
    let i = 0;
    while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
    if (i >= a.length || i >= b.length) continue; // same folder, or one inside the other
    const key = `${[...a.slice(0, i), a[i]].join('/')} -> ${[...b.slice(0, i), b[i]].join('/')}`;
    if (!folderEdges.has(key)) folderEdges.set(key, `${relative(lib, from)} -> ${relative(lib, to)}`);
  }
}
const pairs = [...folderEdges.keys()].map((k) => k.split(' -> ')).filter(([a, b]) => a < b && folderEdges.has(`${b} -> ${a}`));

// The runtime wing: no runtime borrows from a sibling runtime (the shared local base aside), and
// the Linux floor below the runtimes imports nothing above it.
const RUNTIMES = 'engine/runtime/';
const SHARED_RUNTIME_BASE = 'local';
const LINUX_FLOOR = 'engine/linux/';
const FLOOR_MAY_IMPORT = [LINUX_FLOOR, 'engine-api/'];
const runtimeOf = (f) => (f.startsWith(RUNTIMES) ? f.slice(RUNTIMES.length).split('/')[0] : undefined);
const wingViolations = [];
for (const [from, targets] of graph) {
  const a = relative(lib, from);
  for (const to of targets) {
    const b = relative(lib, to);
    const [ra, rb] = [runtimeOf(a), runtimeOf(b)];
    if (ra !== undefined && rb !== undefined && ra !== rb && rb !== SHARED_RUNTIME_BASE) wingViolations.push(`runtime imports a sibling runtime: ${a} -> ${b}`);
    if (a.startsWith(LINUX_FLOOR) && !FLOOR_MAY_IMPORT.some((p) => b.startsWith(p))) wingViolations.push(`the Linux floor imports above it: ${a} -> ${b}`);
  }
}

for (const cycle of cycles) console.log(`file cycle: ${cycle.join(' -> ')}`);
for (const [a, b] of pairs) console.log(`folders import each other: ${a} <-> ${b}\n  ${folderEdges.get(`${a} -> ${b}`)}\n  ${folderEdges.get(`${b} -> ${a}`)}`);
for (const v of wingViolations) console.log(v);
console.log(`${files.length} files: ${cycles.length} file cycle(s), ${pairs.length} sibling folder pair(s) importing each other, ${wingViolations.length} runtime-wing import(s) out of place`);
process.exitCode = cycles.length + pairs.length + wingViolations.length === 0 ? 0 : 1;
