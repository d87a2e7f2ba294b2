import { randomUUID } from 'node:crypto';
import { signCompactJws } from '../keys/compact-jws.js';
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
 * ECDSA signatures are raw R‖S, the only form libtrust accepts (compact-jws.ts).
 *
 * @example
 * const { token } = await signAccessToken(key, { issuer: 'dockgate', subject: 'alice', audience: 'registry.local',
 *   access: [{ type: 'repository', name: 'alice/app', actions: ['pull'] }], ttl: 300 });
 */
export async function signAccessToken(key: SigningKey, grant: AccessTokenGrant, now: Date = new Date()): Promise<SignedAccessToken> {
  const iat = Math.floor(now.getTime() / 1000);
  // Claims in the order the distribution spec lists them; jti is a random UUID (122 random bits,
  // from node's batched source: a randomBytes call per token cost more than the rest of the claims).
  const token = await signCompactJws(key, {
    iss: grant.issuer,
    sub: grant.subject,
    aud: grant.audience,
    exp: iat + grant.ttl,
    nbf: iat,
    iat,
    jti: randomUUID(),
    access: grant.access,
  });
  return { token, issuedAt: new Date(iat * 1000), expiresIn: grant.ttl };
}
