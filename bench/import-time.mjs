/**
 * npm run bench:import — how long `import 'dockgate'` takes, against importing express and jose
 * (what the root cannot do without), measured in the same run: fresh node processes, alternated
 * round by round so machine load hits both alike, each timing its own import with
 * performance.now(). Issue 22's bound: the root ≤ 1.5× express + jose. Also printed, for the
 * record: the root plus building a tokenRouter (which loads express-validator), and each subpath.
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const ROUNDS = Number(process.env.ROUNDS ?? 9);
const BOUND = 1.5;

const cases = {
  'express + jose': "await import('express'); await import('jose');",
  dockgate: "await import('dockgate');",
  'dockgate + tokenRouter()': `const d = await import('dockgate');
    d.tokenRouter({ issuer: 'b', service: 's', keys: { privateKey: key }, allowAnonymous: true });`,
  'dockgate/engine': "await import('dockgate/engine');",
  'dockgate/engine/sandbox': "await import('dockgate/engine/sandbox');",
};

function once(code) {
  // The key is made before the clock starts: key generation is not import time.
  const script = `import { generateKeyPairSync } from 'node:crypto';
const key = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' });
const t = performance.now(); ${code} process.stdout.write(String(performance.now() - t));`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' }));
}

const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (const [name, code] of Object.entries(cases)) times[name].push(once(code));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times['express + jose']);
console.log(`import time, median of ${ROUNDS} fresh processes each (ms):`);
for (const [name, xs] of Object.entries(times)) {
  console.log(`  ${name.padEnd(26)} ${median(xs).toFixed(1).padStart(7)}   ${(median(xs) / base).toFixed(2)}x express + jose`);
}
const ratio = median(times.dockgate) / base;
console.log(`root / (express + jose) = ${ratio.toFixed(2)} (bound ${BOUND}): ${ratio <= BOUND ? 'within' : 'OVER'}`);
process.exitCode = ratio <= BOUND ? 0 : 1;
