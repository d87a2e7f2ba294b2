/**
 * A token service for specs: real keys, a real tokenRouter in a fresh Express app per case,
 * an in-memory user table as the host's Authenticator and an owner-namespace Authorizer.
 */
import express, { type Express } from 'express';
import { decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import { generateSigningKey, tokenRouter, type AuditEvent, type Authenticator, type Authorizer, type TokenOptions, type TokenRouter } from '../../lib/index.js';

export const SERVICE = 'registry.test';
export const ISSUER = 'dockgate-spec';

/** One EC key and certificate per test file: key generation is the slow part. */
export const ecKey = generateSigningKey({ commonName: 'spec signer' });

export const users: Record<string, string> = { alice: 'wonderland', bob: 'builder' };

export const authenticate: Authenticator = async ({ username, password }) =>
  users[username] !== undefined && users[username] === password ? { subject: username } : null;

/** Owners may pull and push their namespace; everyone may pull library/…. */
export const authorize: Authorizer = ({ account, scopes }) =>
  scopes
    .map((s) => {
      if (account !== '' && s.name.startsWith(`${account}/`)) return s;
      if (s.name.startsWith('library/')) return { ...s, actions: s.actions.filter((a) => a === 'pull') };
      return { ...s, actions: [] };
    })
    .filter((s) => s.actions.length > 0);

export interface TokenApp {
  app: Express;
  router: TokenRouter;
  audit: AuditEvent[];
  errors: unknown[];
}

export function tokenApp(overrides: Partial<TokenOptions> = {}): TokenApp {
  const audit: AuditEvent[] = [];
  const errors: unknown[] = [];
  const router = tokenRouter({
    issuer: ISSUER,
    service: SERVICE,
    keys: { privateKey: ecKey.privateKeyPem, certificateChain: ecKey.certificatePem },
    authenticate,
    authorize,
    audit: (e) => audit.push(e),
    onError: (err) => errors.push(err),
    ...overrides,
  });
  const app = express();
  app.use(router);
  return { app, router, audit, errors };
}

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

export function claimsOf(token: string): JWTPayload & { access?: unknown } {
  return decodeJwt(token);
}

export function headerOf(token: string) {
  return decodeProtectedHeader(token);
}

/** A form body for POST /token. */
export function form(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
  return params.toString();
}

export const passwordGrant = (extra: Record<string, string | string[]> = {}) =>
  form({ grant_type: 'password', service: SERVICE, client_id: 'spec', username: 'alice', password: 'wonderland', ...extra });
