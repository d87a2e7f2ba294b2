// Child process of token-grant.mjs: serves ONE contender on 127.0.0.1 (one process per contender:
// sharing a process biased the figures by which server was created second, by up to 1.6×), so
// the load generator (autocannon, in the parent) and the server each get a core of their own.
// Every contender answers both grants on POST /token and signs the same ES256 JWT with the same
// claims through jose:
//   tokenRouter  — dockgate's token endpoint, in-memory authenticate (no bcrypt), memory refresh store;
//   baseline     — a bare Express route parsing the same form and signing the same JWT, refresh
//                  tokens in a Map (the least any server can do);
//   oauth2server — @node-oauth/oauth2-server 5 (the most used Node OAuth 2.0 server) with an
//                  in-memory model whose generateAccessToken signs the same JWT.
// Usage: node token-grant-servers.mjs NAME; sends { port } over IPC when listening, answers "cpu"
// with { cpuMicros } (its CPU time so far) and exits on "stop".
import { randomBytes } from 'node:crypto';
import express from 'express';
import { SignJWT } from 'jose';
import OAuth2Server from '@node-oauth/oauth2-server';
import { generateSigningKey, loadSigningKey, tokenRouter } from '../dist/index.js';

export const ISSUER = 'dockgate-bench';
export const SERVICE = 'registry.bench';
export const USER = 'alice';
export const PASSWORD = 'bench password';
const TTL = 300;

function parseScope(scope) {
  // Same claims shape as dockgate: one access entry per `type:name:actions` item.
  return (Array.isArray(scope) ? scope : (scope ?? '').split(' ')).filter(Boolean).map((item) => {
    const [type, name, actions] = item.split(':');
    return { type, name, actions: actions.split(',') };
  });
}

/** The JWT every contender issues: what dockgate's signAccessToken writes. */
async function signJwt(signer, subject, audience, access) {
  const iat = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ access })
    .setProtectedHeader({ alg: signer.alg, typ: 'JWT', kid: signer.kid, ...(signer.x5c ? { x5c: signer.x5c } : {}) })
    .setIssuer(ISSUER)
    .setSubject(subject)
    .setAudience(audience)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + TTL)
    .setJti(randomBytes(16).toString('base64url'))
    .sign(signer.privateKey);
  return { token, iat };
}

function tokenRouterApp(key) {
  const router = tokenRouter({
    issuer: ISSUER,
    service: SERVICE,
    keys: key,
    // Cheap on purpose: the bench measures the router, not bcrypt.
    authenticate: async ({ username, password }) => (username === USER && password === PASSWORD ? { subject: username } : null),
    // Grants what is asked, like the others: the ACL matcher has its own cost, not measured here.
    authorize: ({ scopes }) => scopes,
    audit: () => {},
  });
  const app = express();
  app.use(router);
  return app;
}

function baselineApp(signer) {
  const refreshTokens = new Map();
  const app = express();
  app.post('/token', express.urlencoded({ extended: false }), async (req, res) => {
    const body = req.body;
    let subject;
    if (body.grant_type === 'password' && body.username === USER && body.password === PASSWORD) subject = body.username;
    else if (body.grant_type === 'refresh_token') subject = refreshTokens.get(body.refresh_token)?.subject;
    if (subject === undefined || body.service !== SERVICE) {
      res.status(400).json({ error: 'invalid_grant' });
      return;
    }
    const access = parseScope(body.scope);
    const { token, iat } = await signJwt(signer, subject, body.service, access);
    let refreshToken;
    if (body.access_type === 'offline' && body.grant_type === 'password') {
      refreshToken = randomBytes(32).toString('base64url');
      refreshTokens.set(refreshToken, { subject });
    }
    res.set('Cache-Control', 'no-store');
    res.json({
      access_token: token,
      token_type: 'Bearer',
      expires_in: TTL,
      issued_at: new Date(iat * 1000).toISOString(),
      scope: access.flatMap((a) => a.actions.map((action) => `${a.type}:${a.name}:${action}`)).join(','),
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
    });
  });
  return app;
}

function oauth2ServerApp(signer) {
  const client = { id: 'containerd-client', grants: ['password', 'refresh_token'] };
  const refreshTokens = new Map();
  const server = new OAuth2Server({
    model: {
      getClient: async (clientId) => (clientId === client.id ? client : null),
      getUser: async (username, password) => (username === USER && password === PASSWORD ? { id: username } : null),
      // Any scope asked is granted, as for the other two.
      validateScope: async (_user, _client, scope) => scope,
      generateAccessToken: async (_client, user, scope) => (await signJwt(signer, user.id, SERVICE, parseScope(scope))).token,
      saveToken: async (token, c, user) => {
        if (token.refreshToken) refreshTokens.set(token.refreshToken, { ...token, client: c, user });
        return { ...token, client: c, user };
      },
      getRefreshToken: async (refreshToken) => refreshTokens.get(refreshToken) ?? null,
      revokeToken: async (token) => refreshTokens.delete(token.refreshToken),
    },
    // Docker's clients are public clients (RFC 6749 §2.1): no client secret, as with dockgate.
    requireClientAuthentication: { password: false, refresh_token: false },
    // Like dockgate with access_type=offline: the refresh grant keeps the same refresh token.
    alwaysIssueNewRefreshToken: false,
    accessTokenLifetime: TTL,
  });
  const app = express();
  app.post('/token', express.urlencoded({ extended: false }), async (req, res) => {
    const response = new OAuth2Server.Response(res);
    try {
      await server.token(new OAuth2Server.Request(req), response);
    } catch (err) {
      res.status(err.code ?? 500).json({ error: err.name, error_description: err.message });
      return;
    }
    res.set(response.headers).status(response.status).json(response.body);
  });
  return app;
}

function listen(app) {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, '127.0.0.1', (err) => (err ? reject(err) : resolve(server)));
  });
}

// The same key and certificate (x5c) in every process, given by the parent, so every contender
// signs the same token with the same key.
const generated = process.env.BENCH_KEY_PEM ? undefined : generateSigningKey();
const key = {
  privateKey: process.env.BENCH_KEY_PEM ?? generated.privateKeyPem,
  certificateChain: process.env.BENCH_CERT_PEM ?? generated.certificatePem,
};
const signer = loadSigningKey(key);
const apps = { tokenRouter: () => tokenRouterApp(key), baseline: () => baselineApp(signer), oauth2server: () => oauth2ServerApp(signer) };
const name = process.argv[2];
if (!apps[name]) throw new Error(`unknown server ${name}`);
const server = await listen(apps[name]());
process.send({ port: server.address().port });
process.on('message', (message) => {
  // CPU time per token is steadier than req/s when other work shares the machine.
  if (message === 'cpu') {
    const { user, system } = process.cpuUsage();
    process.send({ cpuMicros: user + system });
    return;
  }
  if (message !== 'stop') return;
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
process.on('disconnect', () => process.exit(0));
