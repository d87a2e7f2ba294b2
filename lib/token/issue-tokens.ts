import type { Request } from 'express';
import { signAccessToken } from './access-token.js';
import type { AuditEvent } from './audit.js';
import { formatGrantedScope, formatScope, mergeScopes, type ResourceScope } from '../scope/index.js';
import type { ResolvedTokenOptions } from './token-options.js';
import { generateRefreshToken, refreshTokenId } from './refresh/index.js';
import { callStore } from './store-call.js';

/** Everything a grant has established before tokens are issued. */
export interface TokenIssueRequest {
  grant: NonNullable<AuditEvent['grant']>;
  subject: string;
  labels?: Record<string, string[]>;
  service: string;
  clientId: string;
  ip?: string;
  requested: ResourceScope[];
  /** Issue a new refresh token (password grant or GET with offline_token=true). */
  issueRefreshToken: boolean;
  /** An existing refresh token to repeat in the response (refresh grant with access_type=offline). */
  repeatRefreshToken?: string;
  /** The HTTP request, for the per-request logger. */
  req?: Request;
  /** When the credentials expire (Identity.expiresAt): the access token ends no later, and no refresh token is issued. */
  expiresAt?: Date;
}

/** What the endpoints turn into their response bodies. */
export interface IssuedTokens {
  accessToken: string;
  expiresIn: number;
  issuedAt: Date;
  /** Granted scope, one `type:name:action` per action, comma-joined (may be empty). */
  scope: string;
  refreshToken?: string;
}

/**
 * Keeps, of what the authorizer returned, only what was asked for: per resource the actions
 * both requested and granted, `*` in the grant standing for every requested action. A host
 * hook can therefore never widen a token beyond the request.
 */
export function intersectGrants(requested: readonly ResourceScope[], granted: readonly ResourceScope[]): ResourceScope[] {
  const allowed = new Map<string, Set<string>>();
  for (const g of granted) {
    const key = `${g.type}\u0000${g.name}`;
    const set = allowed.get(key) ?? new Set<string>();
    for (const a of g.actions) set.add(a);
    allowed.set(key, set);
  }
  const out: ResourceScope[] = [];
  for (const r of requested) {
    const set = allowed.get(`${r.type}\u0000${r.name}`);
    if (!set) continue;
    const actions = r.actions.filter((a) => set.has(a) || set.has('*'));
    if (actions.length > 0) out.push({ type: r.type, name: r.name, actions });
  }
  return out;
}

/** The access-token lifetime, shortened to end when the credentials do (whole seconds, at least 1). */
export function cappedTtl(ttl: number, expiresAt: Date | undefined, now = Date.now()): number {
  if (expiresAt === undefined) return ttl;
  return Math.max(1, Math.min(ttl, Math.floor((expiresAt.getTime() - now) / 1000)));
}

/**
 * Authorizes, signs the access token and, when asked, records a new refresh token. A refresh
 * token is recorded before it is returned: when the store is down the caller gets 503, never a
 * token the server could not revoke.
 */
export async function issueTokens(options: ResolvedTokenOptions, request: TokenIssueRequest): Promise<IssuedTokens> {
  const requested = mergeScopes(request.requested);
  const granted = requested.length === 0 ? [] : intersectGrants(requested, await options.authorize({
    account: request.subject,
    ...(request.labels ? { labels: request.labels } : {}),
    service: request.service,
    ...(request.ip ? { ip: request.ip } : {}),
    clientId: request.clientId,
    scopes: requested.map((s) => ({ ...s, actions: [...s.actions] })),
  }));
  let refreshToken = request.repeatRefreshToken;
  // A credential that expires (an ID token) never yields one that lives longer: no refresh token.
  const issueRefreshToken = request.issueRefreshToken && request.expiresAt === undefined;
  if (issueRefreshToken) {
    refreshToken = generateRefreshToken();
    const now = Date.now();
    const record = {
      id: refreshTokenId(refreshToken),
      subject: request.subject,
      service: request.service,
      clientId: request.clientId,
      ...(request.labels ? { labels: request.labels } : {}),
      createdAt: now,
      expiresAt: now + options.refresh.absoluteTtlMs,
      idleExpiresAt: now + options.refresh.idleTtlMs,
    };
    await callStore(() => options.refresh.store.save(record, options.refresh.maxPerSubject), options.metrics);
  }
  const signed = await signAccessToken(options.keyRing.signer, {
    issuer: options.issuer,
    subject: request.subject,
    audience: request.service,
    access: granted.map((g) => ({ type: g.type, name: g.name, actions: g.actions })),
    ttl: cappedTtl(options.accessTokenTtl, request.expiresAt),
  });
  options.audit?.({
    type: 'token.issued',
    grant: request.grant,
    account: request.subject,
    service: request.service,
    clientId: request.clientId,
    ...(request.ip ? { ip: request.ip } : {}),
    requested: requested.map(formatScope).join(' '),
    granted: granted.map(formatScope).join(' '),
    refreshTokenIssued: issueRefreshToken,
  }, request.req);
  return {
    accessToken: signed.token,
    expiresIn: signed.expiresIn,
    issuedAt: signed.issuedAt,
    scope: formatGrantedScope(granted),
    ...(refreshToken ? { refreshToken } : {}),
  };
}
