// The bench's server processes (forked by bearer-protection.mjs, so the load generator does not
// share their event loop). argv[2] says which:
//   routes — one Express app with the same tags/list handler three times: open, behind
//            requireBearer (the same process's tokenRouter as key source), and behind a bare
//            jose `jwtVerify` middleware (the least any verification can cost);
//   demo   — the demo app exactly as mounted (createDemoApp: request ids, /metrics, registry
//            routes, token service, engine), and its open twin composed the same way with a
//            pass-through guard; one port each.
import { pino } from 'pino';
import { createPublicKey } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import { jwtVerify } from 'jose';
import { bearerGuard } from '../dist/bearer/index.js';
import { tokenRouter } from '../dist/index.js';

const here = fileURLToPath(new URL('.', import.meta.url));

function listen(app) {
  return new Promise((resolve) => { const server = app.listen(0, '127.0.0.1', () => resolve(server)); });
}

async function routesServers({ privateKeyPem, first = 'protected' }) {
  const tokens = tokenRouter({ issuer: 'bench', service: 'registry.bench', keys: { privateKey: privateKeyPem }, allowAnonymous: true });
  const guard = bearerGuard({ realm: 'http://127.0.0.1:1/token', keys: tokens });
  const publicKey = createPublicKey(privateKeyPem);
  const bareVerify = async (req, res, next) => {
    try {
      const token = req.headers.authorization?.slice('Bearer '.length) ?? '';
      req.claims = (await jwtVerify(token, publicKey, { issuer: 'bench', audience: 'registry.bench', algorithms: ['ES256'] })).payload;
      next();
    } catch {
      res.status(401).json({ errors: [{ code: 'UNAUTHORIZED' }] });
    }
  };
  const app = express();
  app.set('etag', false);
  app.set('x-powered-by', false);
  const tagsList = (_req, res) => {
    res.json({ name: 'alice/app', tags: ['1.0', 'latest'] });
  };
  const routes = {
    open: () => app.get('/open/v2/alice/app/tags/list', tagsList),
    bare: () => app.get('/bare/v2/alice/app/tags/list', bareVerify, tagsList),
    protected: () => app.get('/v2/alice/app/tags/list', guard('repository:alice/app:pull'), tagsList),
  };
  // The contender this process serves is registered first: each route passed over costs a match.
  routes[first]();
  for (const [name, add] of Object.entries(routes)) if (name !== first) add();
  return [await listen(app)];
}

async function demoServers({ privateKeyPem, certificatePem }) {
  const { createDemoApp, composeDemoApp } = await import('../demo/dist/app.js');
  const { parseDemoOptions } = await import('../demo/dist/options.js');
  const state = mkdtempSync(join(tmpdir(), 'dockgate-bench-demo-'));
  const options = parseDemoOptions(['--runtime', 'process', '--engine-socket', join(state, 'engine.sock'), '--state-dir', state], join(here, '../demo'));
  const key = { keyPath: '', certPath: '', privateKey: privateKeyPem, certificate: certificatePem, created: false };
  // Lines go nowhere: the bench measures the routes, not the terminal.
  const logger = pino({ level: 'info' }, pino.destination('/dev/null'));
  const demo = createDemoApp(options, key, 'http://127.0.0.1:1', { logger });
  const bearer = Object.freeze({ subject: 'alice', access: Object.freeze([]), expiresAt: new Date(Date.now() + 3600_000), claims: Object.freeze({}) });
  const passThrough = () => (req, _res, next) => { req.bearer = bearer; next(); };
  const open = composeDemoApp({ ...demo.parts, guard: passThrough });
  return [await listen(demo.app), await listen(open)];
}

process.once('message', async ({ kind, ...keys }) => {
  const servers = kind === 'demo' ? await demoServers(keys) : await routesServers(keys);
  process.send({ ports: servers.map((s) => s.address().port) });
  process.on('message', (msg) => {
    // CPU time per request is steadier than req/s when other work shares the machine.
    if (msg === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send({ cpuMicros: user + system });
      return;
    }
    if (msg !== 'stop') return;
    for (const s of servers) s.closeAllConnections();
    Promise.all(servers.map((s) => new Promise((r) => s.close(r)))).then(() => process.exit(0));
  });
});
process.on('disconnect', () => process.exit(0));
