import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import type { SigningKey } from '../keys/index.js';
import type { AccessEntry } from '../scope/index.js';

/** What one access token grants. */
export interface AccessTokenGrant {
  issuer: string;
  /** The authenticated account; `''` for anonymous callers, as the distribution JWT spec says. */
  subject: string;
  /** The service (registry) that will verify it; emitted as a string `aud`, which registry 2.8 requires. */
  audience: string;
  access: AccessEntry[];
  /** Lifetime in whole seconds. */
  ttl: number;
}

/** A signed access token and the times a client needs to cache it. */
export interface SignedAccessToken {
  token: string;
  issuedAt: Date;
  expiresIn: number;
}

/**
 * Signs a registry access token per the distribution JWT spec: header `alg`, `typ: "JWT"`, `kid`
 * and (when configured) `x5c`; claims `iss`, `sub`, `aud`, `exp`, `nbf`, `iat`, `jti`, `access`.
 * jose writes ECDSA signatures as raw R‖S, the only form libtrust accepts.
 *
 * @example
 * const { token } = await signAccessToken(key, { issuer: 'dockgate', subject: 'alice', audience: 'registry.local',
 *   access: [{ type: 'repository', name: 'alice/app', actions: ['pull'] }], ttl: 300 });
 */
export async function signAccessToken(key: SigningKey, grant: AccessTokenGrant, now: Date = new Date()): Promise<SignedAccessToken> {
  const iat = Math.floor(now.getTime() / 1000);
  const token = await new SignJWT({ access: grant.access })
    .setProtectedHeader({ alg: key.alg, typ: 'JWT', kid: key.kid, ...(key.x5c ? { x5c: key.x5c } : {}) })
    .setIssuer(grant.issuer)
    .setSubject(grant.subject)
    .setAudience(grant.audience)
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + grant.ttl)
    .setJti(randomBytes(16).toString('base64url'))
    .sign(key.privateKey);
  return { token, issuedAt: new Date(iat * 1000), expiresIn: grant.ttl };
}
