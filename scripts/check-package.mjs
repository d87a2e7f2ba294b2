#!/usr/bin/env node
/**
 * The package as a user installs it: `npm pack`, the tarball installed into a fresh app, and
 * four checks there (issue 22): the root import loads none of the heavy dependencies; a strict
 * TypeScript consumer (nodenext, no skipLibCheck) compiles the card's shape; tokenRouter and
 * requireBearer(scope) in one app give a 401 naming the token route, then a 200 with its
 * token; every subpath imports. Run by .ci/run after `npm install`; `npm run check:package`.
 *
 * The install is tried offline (`--offline`), from the npm cache. A project installed from its
 * lock file caches tarballs but not the registry documents a range needs, so on a fresh CI
 * machine that install fails (ENOTCACHED) and the app gets the tarball unpacked as
 * node_modules/dockgate with its dependencies symlinked from the project's node_modules (the
 * locked versions); the script says which way it went. No network either way.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')).packages;
const HEAVY = ['node-pty', 'ioredis', 'ldapts', 'tar-stream', 'prom-client'];
const started = Date.now();
let failures = 0;

function check(name, ok, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${detail ? `: ${detail}` : ''}`);
  if (!ok) failures += 1;
}

function run(cmd, args, options = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
}

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

// 1. Pack. dist/ is built first when missing or older than lib/ (pack runs no scripts: CI has just built).
if (!existsSync(join(root, 'dist/index.js')) || newestMtime(join(root, 'lib')) > statSync(join(root, 'dist/index.js')).mtimeMs) {
  run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: root });
}
const work = mkdtempSync(join(tmpdir(), 'dockgate-pack-'));
const app = join(work, 'app');
try {
  const packed = JSON.parse(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: root }))[0];
  const tarball = join(work, packed.filename);
  const files = packed.files.map((f) => f.path);
  check('the tarball holds dist/, README, CHANGELOG, LICENSE and no sources or specs',
    files.includes('dist/index.js') && files.includes('README.md') && !files.some((f) => f.startsWith('lib/') || f.startsWith('spec/')),
    `${files.length} files, ${packed.size} bytes`);

  // 2. A fresh app with the tarball installed, plus what a TypeScript consumer installs.
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const typesAt = (name) => `${name}@${lock[`node_modules/${name}`].version}`;
  const wanted = [tarball, typesAt('@types/express'), typesAt('@types/node')];
  let how = 'npm install --offline';
  try {
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', ...wanted], { cwd: app, timeout: 120_000 });
  } catch (err) {
    // Not every package is in the cache: the same versions, from the project's node_modules.
    how = `symlinks to ${join(root, 'node_modules')} (offline install failed: ${String(err.stderr ?? err.message).split('\n').find((l) => l.includes('ERR')) ?? 'see npm output'})`;
    rmSync(join(app, 'node_modules'), { recursive: true, force: true });
    mkdirSync(join(app, 'node_modules/@types'), { recursive: true });
    run('tar', ['xzf', tarball, '-C', work]);
    run('mv', [join(work, 'package'), join(app, 'node_modules/dockgate')]);
    for (const name of [...Object.keys(pkg.dependencies), '@types/express', '@types/node']) {
      // A scoped name (@balena/dockerignore) needs its scope folder first.
      mkdirSync(dirname(join(app, 'node_modules', name)), { recursive: true });
      symlinkSync(join(root, 'node_modules', name), join(app, 'node_modules', name));
    }
  }
  check('the tarball installs into a fresh app', existsSync(join(app, 'node_modules/dockgate/dist/index.js')), how);
  check('node-pty (an optional peer) is not installed with it', !existsSync(join(app, 'node_modules/node-pty')));

  // 3. The root import loads none of the heavy dependencies: ESM resolutions through a hook,
  // CommonJS loads through the require cache (CommonJS packages never pass the ESM hook).
  writeFileSync(join(app, 'hooks.mjs'), `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(process.env.DOCKGATE_LOADS, result.url + '\\n');
  return result;
}\n`);
  writeFileSync(join(app, 'record.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
  const loadsFile = join(work, 'loads.txt');
  run(process.execPath, ['--import', './record.mjs', '--input-type=module', '-e', `
    import { appendFileSync } from 'node:fs';
    import { createRequire } from 'node:module';
    await import('dockgate');
    appendFileSync(process.env.DOCKGATE_LOADS, Object.keys(createRequire(import.meta.url).cache).map((p) => 'file://' + p).join('\\n') + '\\n');
  `], { cwd: app, env: { ...process.env, DOCKGATE_LOADS: loadsFile } });
  const loaded = new Set(readFileSync(loadsFile, 'utf8').split('\n').map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter(Boolean));
  const heavy = HEAVY.filter((name) => loaded.has(name));
  check(`import 'dockgate' loads none of ${HEAVY.join(', ')}`, heavy.length === 0 && loaded.has('express'),
    heavy.length ? `loaded ${heavy.join(', ')}` : `packages loaded: ${[...loaded].sort().join(', ')}`);

  // 4. A strict TypeScript consumer compiles the card's shape.
  writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] },
    files: ['card.ts'],
  }));
  writeFileSync(join(app, 'card.ts'), `import express from 'express';
import { generateSigningKey, htpasswdAuthenticator, requireBearer, tokenRouter, type BearerScope } from 'dockgate';
import type { EngineRouterOptions } from 'dockgate/engine';

const key = generateSigningKey();
const app = express();
app.use(tokenRouter({
  issuer: 'card', service: 'registry.card',
  keys: { privateKey: key.privateKeyPem, certificateChain: key.certificatePem },
  authenticate: htpasswdAuthenticator({ content: '' }),
}));
app.get('/v2/x/tags/list', requireBearer('repository:x:pull'), (_req, res) => { res.json({ tags: [] }); });
export const scope: BearerScope = 'repository:x:pull';
export type Engine = EngineRouterOptions;
`);
  try {
    run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], { cwd: app });
    check('a strict TypeScript consumer (nodenext, no skipLibCheck) compiles app.get(path, requireBearer(scope))', true);
  } catch (err) {
    check('a strict TypeScript consumer (nodenext, no skipLibCheck) compiles app.get(path, requireBearer(scope))', false, String(err.stdout || err.stderr).slice(0, 2000));
  }

  // 5. tokenRouter + requireBearer(scope) in one app, over a real socket.
  writeFileSync(join(app, 'serve.mjs'), `import express from 'express';
import { generateSigningKey, aclAuthorizer, requireBearer, tokenRouter } from 'dockgate';
const key = generateSigningKey();
const app = express();
app.use('/auth', tokenRouter({
  issuer: 'card', service: 'registry.card',
  keys: { privateKey: key.privateKeyPem, certificateChain: key.certificatePem },
  authenticate: async ({ username, password }) => (username === 'alice' && password === 'wonderland' ? { subject: 'alice' } : null),
  authorize: aclAuthorizer([{ match: { account: 'alice' }, actions: ['pull'] }]),
}));
app.get('/v2/x/tags/list', requireBearer('repository:x:pull'), (_req, res) => { res.json({ name: 'x', tags: ['1'] }); });
const server = app.listen(0, '127.0.0.1', async () => {
  const base = 'http://127.0.0.1:' + server.address().port;
  const out = {};
  const refused = await fetch(base + '/v2/x/tags/list');
  out.refused = { status: refused.status, challenge: refused.headers.get('www-authenticate') };
  const realm = /realm="([^"]+)"/.exec(out.refused.challenge ?? '')?.[1];
  out.realm = realm;
  const token = await fetch(realm + '?service=registry.card&scope=repository:x:pull', { headers: { authorization: 'Basic ' + Buffer.from('alice:wonderland').toString('base64') } });
  const body = await token.json();
  const ok = await fetch(base + '/v2/x/tags/list', { headers: { authorization: 'Bearer ' + body.token } });
  out.ok = { status: ok.status, body: await ok.json() };
  out.base = base;
  console.log(JSON.stringify(out));
  server.close();
});
`);
  const served = JSON.parse(run(process.execPath, ['serve.mjs'], { cwd: app, timeout: 30_000 }));
  check('tokenRouter + requireBearer(scope): 401 with a challenge naming the token route',
    served.refused.status === 401 && served.realm === `${served.base}/auth/token`
      && served.refused.challenge === `Bearer realm="${served.base}/auth/token",service="registry.card",scope="repository:x:pull"`,
    served.refused.challenge);
  check('… then 200 with a token from that route', served.ok.status === 200 && served.ok.body.tags?.[0] === '1', `status ${served.ok.status}`);

  // 6. Every subpath imports; the node-pty ones say which package is missing, then import with it.
  const subpaths = Object.keys(pkg.exports).filter((k) => k !== './package.json').map((k) => (k === '.' ? 'dockgate' : `dockgate/${k.slice(2)}`));
  const tryImport = (entry) => {
    try {
      const names = run(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(entry)}); console.log(Object.keys(m).length)`], { cwd: app });
      return { ok: true, detail: `${names.trim()} exports` };
    } catch (err) {
      const stderr = String(err.stderr);
      return { ok: false, detail: stderr.split('\n').find((l) => /^\w*Error\b/.test(l)) ?? stderr.slice(0, 300) };
    }
  };
  const needPty = new Set(['dockgate/engine/sandbox', 'dockgate/engine/process']);
  for (const entry of subpaths.filter((e) => !needPty.has(e))) {
    const { ok, detail } = tryImport(entry);
    check(`import '${entry}'`, ok, detail);
  }
  for (const entry of needPty) {
    const { ok, detail } = tryImport(entry);
    check(`import '${entry}' without node-pty fails naming it`, !ok && detail.startsWith('MissingPeerError') && detail.includes('npm install node-pty'), detail);
  }
  symlinkSync(join(root, 'node_modules/node-pty'), join(app, 'node_modules/node-pty'));
  for (const entry of needPty) {
    const { ok, detail } = tryImport(entry);
    check(`import '${entry}' with node-pty installed`, ok, detail);
  }

  // 7. Every entry's declarations compile for a strict consumer (with the optional peer present).
  writeFileSync(join(app, 'all.ts'), subpaths.map((entry, i) => `import * as m${i} from '${entry}';\nexport { m${i} };`).join('\n') + '\n');
  writeFileSync(join(app, 'tsconfig.all.json'), JSON.stringify({
    compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, skipLibCheck: false, noEmit: true, types: ['node'] },
    files: ['all.ts'],
  }));
  try {
    run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.all.json'], { cwd: app });
    check('every entry\'s declarations compile for a strict consumer (nodenext, no skipLibCheck)', true);
  } catch (err) {
    check('every entry\'s declarations compile for a strict consumer (nodenext, no skipLibCheck)', false, String(err.stdout || err.stderr).slice(0, 3000));
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`${failures === 0 ? 'package check passed' : `package check: ${failures} failure(s)`} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exitCode = failures === 0 ? 0 : 1;
