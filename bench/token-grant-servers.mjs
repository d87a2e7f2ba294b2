// Child process of token-grant.mjs: serves the two contenders on 127.0.0.1 so the load generator
// (autocannon, in the parent) and the server each get a core of their own.
//   tokenRouter — dockgate's token endpoint, password grant, in-memory authenticate (no bcrypt);
//   baseline    — a bare Express route parsing the same form and signing the same JWT.
// Usage: node token-grant-servers.mjs [tokenRouter|baseline ...] (defaults to both); sends
// { ports: { name: port } } over IPC when listening, answers "cpu" with { cpuMicros } (its CPU time
// so far) and exits on "stop".
import { randomBytes } from 'node:crypto';
import express from 'express';
import { SignJWT } from 'jose';
import { generateSigningKey, tokenRouter } from '../dist/index.js';

export const ISSUER = 'dockgate-bench';
export const SERVICE = 'registry.bench';
export const USER = 'alice';
export const PASSWORD = 'bench password';
const TTL = 300;

const { privateKeyPem, certificatePem } = generateSigningKey();

function tokenRouterApp() {
  const router = tokenRouter({
    issuer: ISSUER,
    service: SERVICE,
    keys: { privateKey: privateKeyPem, certificateChain: certificatePem },
    // Cheap on purpose: the bench measures the router, not bcrypt.
    authenticate: async ({ username, password }) => (username === USER && password === PASSWORD ? { subject: username } : null),
    // Grants what is asked, like the baseline: the ACL matcher has its own cost, not measured here.
    authorize: ({ scopes }) => scopes,
    audit: () => {},
  });
  const app = express();
  app.use(router);
  return { app, signer: router.tokenService.keyRing.signer };
}

function parseScope(scope) {
  // Same claims shape as dockgate: one access entry per `type:name:actions` item.
  return (scope ?? '').split(' ').filter(Boolean).map((item) => {
    const [type, name, actions] = item.split(':');
    return { type, name, actions: actions.split(',') };
  });
}

function baselineApp(signer) {
  const app = express();
  app.post('/token', express.urlencoded({ extended: false }), async (req, res) => {
    const body = req.body;
    if (body.grant_type !== 'password' || body.username !== USER || body.password !== PASSWORD || body.service !== SERVICE) {
      res.status(400).json({ error: 'invalid_grant' });
      return;
    }
    const access = parseScope(body.scope);
    const iat = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ access })
      .setProtectedHeader({ alg: signer.alg, typ: 'JWT', kid: signer.kid, ...(signer.x5c ? { x5c: signer.x5c } : {}) })
      .setIssuer(ISSUER)
      .setSubject(body.username)
      .setAudience(body.service)
      .setIssuedAt(iat)
      .setNotBefore(iat)
      .setExpirationTime(iat + TTL)
      .setJti(randomBytes(16).toString('base64url'))
      .sign(signer.privateKey);
    res.set('Cache-Control', 'no-store');
    res.json({
      access_token: token,
      token_type: 'Bearer',
      expires_in: TTL,
      issued_at: new Date(iat * 1000).toISOString(),
      scope: access.flatMap((a) => a.actions.map((action) => `${a.type}:${a.name}:${action}`)).join(','),
    });
  });
  return app;
}

function listen(app) {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(server)));
  });
}

const wanted = process.argv.slice(2);
const names = wanted.length > 0 ? wanted : ['tokenRouter', 'baseline'];
const dockgate = tokenRouterApp();
const apps = { tokenRouter: dockgate.app, baseline: baselineApp(dockgate.signer) };
const ports = {};
const servers = [];
for (const name of names) {
  if (!apps[name]) throw new Error(`unknown server ${name}`);
  const server = await listen(apps[name]);
  servers.push(server);
  ports[name] = server.address().port;
}
process.send({ ports });
process.on('message', (message) => {
  // CPU time per token is steadier than req/s when other work shares the machine.
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ cpuMicros: user + system });
    return;
  }
  if (message !== 'stop') return;
  for (const server of servers) server.closeAllConnections();
  Promise.all(servers.map((s) => new Promise((r) => s.close(r)))).then(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
