/** Shared fixtures for the bearer specs: a token service, a protected app and crafted tokens. */
import { createHmac, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import express, { type Express } from 'express';
import { SignJWT, type JWTPayload } from 'jose';
import { bearerGuard, bearerOf, type BearerOptions } from '../../lib/bearer/index.js';
import { createSelfSignedCertificate, generateSigningKey, libtrustKeyId, tokenRouter, type TokenRouter } from '../../lib/index.js';

export const ISSUER = 'dockgate-spec';
export const SERVICE = 'registry.spec';
export const REALM = 'http://127.0.0.1:1/token';

export const generated = generateSigningKey();

/** A token service (no users needed: the specs sign their own tokens with its key). */
export function makeTokens(): TokenRouter {
  return tokenRouter({
    issuer: ISSUER,
    service: SERVICE,
    keys: { privateKey: generated.privateKeyPem, certificateChain: generated.certificatePem },
    allowAnonymous: true,
  });
}

export const tokens = makeTokens();
export const signer = tokens.tokenService.keyRing.signer;

export interface TokenShape {
  header?: Record<string, unknown>;
  claims?: JWTPayload;
  key?: KeyObject;
}

const pullAlice = [{ type: 'repository', name: 'alice/app', actions: ['pull'] }];

/** Signs a token like the service does, with parts overridable. */
export async function sign(shape: TokenShape = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: JWTPayload = { iss: ISSUER, sub: 'alice', aud: SERVICE, iat: now, nbf: now, exp: now + 300, access: pullAlice, ...shape.claims };
  for (const [k, v] of Object.entries(claims)) if (v === undefined) delete claims[k];
  return new SignJWT(claims)
    .setProtectedHeader({ alg: signer.alg, typ: 'JWT', kid: signer.kid, ...shape.header } as { alg: string })
    .sign(shape.key ?? signer.privateKey);
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

export function claimsNow(extra: JWTPayload = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  return { iss: ISSUER, sub: 'alice', aud: SERVICE, iat: now, nbf: now, exp: now + 300, access: pullAlice, ...extra };
}

/** `alg: none`, empty signature (RFC 7519 §6 unsecured JWT). */
export function unsecuredToken(): string {
  return `${b64({ alg: 'none', typ: 'JWT', kid: signer.kid })}.${b64(claimsNow())}.`;
}

/** Algorithm confusion: HS256 whose HMAC secret is the verifier's public key (PEM and JWK forms tried by attackers). */
export function hs256WithPublicKey(secret: string | Buffer): string {
  const input = `${b64({ alg: 'HS256', typ: 'JWT', kid: signer.kid })}.${b64(claimsNow())}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

export const attacker = generateKeyPairSync('ec', { namedCurve: 'P-256' });
export const attackerCertificate = createSelfSignedCertificate(attacker.privateKey, { commonName: 'attacker' });
export const attackerPrivate = createPrivateKey(attacker.privateKey.export({ type: 'pkcs8', format: 'pem' }));
export const attackerKid = libtrustKeyId(attacker.publicKey);

/** A protected app: `/v2/` (any valid token), tags/list (pull on the name), a push route and an echo of req.bearer. */
export function protectedApp(options: Partial<BearerOptions> = {}): Express {
  const guard = bearerGuard({ realm: REALM, keys: tokens, ...options });
  const app = express();
  app.get('/v2/', guard([]), (_req, res) => {
    res.json({});
  });
  app.get('/v2/*name/tags/list', guard((req) => `repository:${(req.params.name as unknown as string[]).join('/')}:pull`), (req, res) => {
    res.json({ name: (req.params.name as unknown as string[]).join('/'), tags: ['1'], subject: bearerOf(req).subject });
  });
  app.put('/v2/alice/app/manifests/1', guard('repository:alice/app:pull,push'), (_req, res) => {
    res.status(201).end();
  });
  app.get('/catalog', guard(['registry:catalog:*']), (req, res) => {
    res.json({ access: req.bearer?.access });
  });
  return app;
}
