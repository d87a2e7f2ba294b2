// Reads a V8 .cpuprofile (node --cpu-prof) and tells where the time went: self time grouped by
// the package or dockgate folder that owns the code, plus the busiest functions.
import { readFileSync } from 'node:fs';

/** [category, test on the script URL]; the first match wins. */
const CATEGORIES = [
  ['dockgate validate-params (express-validator glue)', (u) => /\/dist\/token\/middleware\/validate-params\.js$/.test(u)],
  ['express-validator (+ validator, lodash)', (u) => /node_modules\/(express-validator|validator|lodash)\//.test(u)],
  ['body parser (body-parser, raw-body, qs, iconv-lite, type-is)', (u) => /node_modules\/(body-parser|raw-body|qs|iconv-lite|type-is|content-type|media-typer|mime-types|mime-db|bytes|on-finished|unpipe)\//.test(u)],
  ['express + router', (u) => /node_modules\/(express|router|path-to-regexp|finalhandler|send|serve-static|parseurl|depd|debug|ms|encodeurl|escape-html|etag|fresh|vary|accepts|negotiator|proxy-addr|forwarded|ipaddr\.js|range-parser|statuses|cookie|content-disposition|merge-descriptors|setprototypeof|http-errors|inherits|toidentifier)\//.test(u)],
  ['jose', (u) => /node_modules\/jose\//.test(u)],
  ['dockgate throttle', (u) => /\/dist\/token\/throttle\//.test(u)],
  ['dockgate scope grammar', (u) => /\/dist\/scope\//.test(u)],
  ['dockgate token (other)', (u) => /\/dist\/token\//.test(u)],
  ['dockgate (other)', (u) => /\/dist\//.test(u) && !/\/demo\/dist\//.test(u)],
  ['demo', (u) => /\/demo\/dist\//.test(u)],
  ['pino (+ sonic-boom)', (u) => /node_modules\/(pino|sonic-boom|pino-std-serializers|quick-format-unescaped|fast-redact|thread-stream|atomic-sleep|on-exit-leak-free|safe-stable-stringify)\//.test(u)],
  ['prom-client', (u) => /node_modules\/(prom-client|tdigest|bintrees)\//.test(u)],
  ['bench harness', (u) => /\/bench\//.test(u)],
  ['node internals (http, net, streams, crypto JS)', (u) => u.startsWith('node:')],
];

function categoryOf(frame) {
  if (!frame.url) {
    if (['(garbage collector)', '(program)', '(idle)', '(root)'].includes(frame.functionName)) return frame.functionName;
    return 'native (V8 / C++: crypto sign, JSON, regexp…)';
  }
  for (const [name, test] of CATEGORIES) if (test(frame.url)) return name;
  return 'other';
}

/**
 * @param {string} file path of a .cpuprofile
 * @returns {{ totalMs: number, busyMs: number, categories: [string, number][], functions: [string, number][] }}
 */
export function summarizeCpuProfile(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const categories = new Map();
  const functions = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, micros] of self) {
    const frame = byId.get(id).callFrame;
    total += micros;
    if (frame.functionName === '(idle)') idle += micros;
    const category = categoryOf(frame);
    categories.set(category, (categories.get(category) ?? 0) + micros);
    const where = frame.url ? `${frame.url.replace(/^.*\/(node_modules|dist|bench)\//, '$1/')}:${frame.lineNumber + 1}` : 'native';
    const key = `${frame.functionName || '(anonymous)'} ${where}`;
    functions.set(key, (functions.get(key) ?? 0) + micros);
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / 1000]);
  return { totalMs: total / 1000, busyMs: (total - idle) / 1000, categories: sorted(categories), functions: sorted(functions) };
}
