import type { Request } from 'express';
import type { RefreshTokenRecord } from '../refresh/index.js';
import { refreshTokenId } from '../refresh/index.js';
import { OAuthError } from '../oauth-error.js';
import { callAccountLookup } from './authenticate-call.js';
import { callStore } from '../store-call.js';
import type { ResolvedTokenOptions } from '../token-options.js';

const INVALID = 'the refresh token is invalid, expired or revoked';

/**
 * Redeems a refresh token: it must be known, alive, issued for this `service` (the spec's
 * "only good for this service"), and its account must still exist and may log in, as far as the
 * authenticator can tell (Authenticator.lookup). Every refusal is the same `invalid_grant`, so a
 * caller cannot tell a revoked token from one issued for another service. A removed or disabled
 * account's refresh tokens are all revoked, so it stays refused even if the name comes back.
 */
export async function redeemRefreshToken(
  options: ResolvedTokenOptions,
  token: string,
  service: string,
  clientId: string,
  ip: string,
  req?: Request,
): Promise<RefreshTokenRecord> {
  const record = await callStore(() => options.refresh.store.use(refreshTokenId(token), Date.now(), options.refresh.idleTtlMs), options.metrics);
  // The client always reads the same words; the operator's audit log says which check failed.
  const reason = !record
    ? 'unknown, expired or revoked refresh token'
    : record.service !== service
      ? 'refresh token issued for another service'
      : options.refresh.bindClientId && record.clientId !== clientId
        ? 'refresh token issued to another client_id'
        : undefined;
  if (!record || reason) {
    options.audit?.({ type: 'refresh.refused', grant: 'refresh_token', account: record?.subject ?? '', service, clientId, ip, reason, error: 'invalid_grant' }, req);
    throw new OAuthError('invalid_grant', INVALID);
  }
  // Anonymous callers get no refresh token, so every record names an account to ask about.
  const lookup = options.authenticate?.lookup;
  const status = lookup ? await callAccountLookup(lookup, record.subject, options.metrics) : undefined;
  if (status === 'unknown' || status === 'disabled') {
    const revoked = await callStore(() => options.refresh.store.revokeSubject(record.subject), options.metrics);
    if (revoked > 0) options.metrics?.refreshTokens.inc({ event: 'revoked' }, revoked);
    options.audit?.({
      type: 'refresh.refused', grant: 'refresh_token', account: record.subject, service, clientId, ip,
      reason: `the account is ${status === 'unknown' ? 'gone' : 'disabled'}; its ${revoked} refresh token(s) revoked`, error: 'invalid_grant',
    }, req);
    throw new OAuthError('invalid_grant', INVALID);
  }
  return record;
}
