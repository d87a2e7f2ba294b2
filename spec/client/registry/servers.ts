/** Real HTTP servers on 127.0.0.1 for the client specs: dockgate's token service, a protected registry, a GET-only token server. */
import express, { type Express, type Request } from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearerGuard } from '../../../lib/bearer/index.js';
import { aclAuthorizer, generateSigningKey, ownNamespaceAcl, tokenRouter, type Authenticator, type TokenRouter } from '../../../lib/index.js';

export interface Listening {
  origin: string;
  close(): Promise<void>;
}

export async function listen(app: Express): Promise<Listening> {
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Everything a server saw: method, path and query, headers and form body. */
export interface Seen {
  method: string;
  url: string;
  headers: Request['headers'];
  body: Record<string, string>;
}

function recorder(log: Seen[]) {
  return express.Router().use(express.urlencoded({ extended: false }), (req, _res, next) => {
    log.push({ method: req.method, url: req.originalUrl, headers: { ...req.headers }, body: { ...(req.body ?? {}) } });
    next();
  });
}

export const authenticate: Authenticator = async ({ username, password }) => (username === 'alice' && password === 'pw' ? { subject: 'alice' } : null);

/** dockgate's token service (alice:pw, own namespace), recording every request. */
export async function startAuthServer(service = 'registry.client-spec'): Promise<Listening & { seen: Seen[]; tokens: TokenRouter; realm: string }> {
  const seen: Seen[] = [];
  const key = generateSigningKey();
  const tokens = tokenRouter({
    issuer: 'client-spec', service, keys: { privateKey: key.privateKeyPem }, authenticate, authorize: aclAuthorizer(ownNamespaceAcl()), allowAnonymous: true, throttle: false,
  });
  const app = express();
  // The recorder's form parser marks the body parsed; the router's parser then leaves it as is.
  app.use(recorder(seen));
  app.use(tokens);
  const listening = await listen(app);
  return { ...listening, seen, tokens, realm: `${listening.origin}/token` };
}

/** A registry whose /v2/ and tags/list are behind requireBearer with the given realm, recording every request. */
export async function startRegistry(tokens: TokenRouter, realm: string): Promise<Listening & { seen: Seen[] }> {
  const seen: Seen[] = [];
  const guard = bearerGuard({ realm, keys: tokens });
  const app = express();
  app.use(recorder(seen));
  app.get('/v2/', guard([]), (_req, res) => {
    res.json({});
  });
  app.get('/v2/*name/tags/list', guard((req) => `repository:${(req.params.name as unknown as string[]).join('/')}:pull`), (req, res) => {
    res.json({ name: (req.params.name as unknown as string[]).join('/'), tags: ['v1'] });
  });
  return { ...(await listen(app)), seen };
}

/** A token server answering POST with `postStatus` and GET with `getBody` (a GCR/old-registry stand-in). */
export async function startGetOnlyServer(postStatus: number, getBody: () => { status: number; body: unknown }): Promise<Listening & { seen: Seen[]; realm: string }> {
  const seen: Seen[] = [];
  const app = express();
  app.use(recorder(seen));
  app.post('/token', (_req, res) => {
    res.status(postStatus).json({ error: 'unsupported' });
  });
  app.get('/token', (_req, res) => {
    const { status, body } = getBody();
    res.status(status).json(body);
  });
  const listening = await listen(app);
  return { ...listening, seen, realm: `${listening.origin}/token` };
}
