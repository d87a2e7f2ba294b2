import type { Request } from 'express';
import type { RefreshTokenRecord } from '../refresh/index.js';
import { refreshTokenId } from '../refresh/index.js';
import { OAuthError } from '../oauth-error.js';
import { callStore } from '../store-call.js';
import type { ResolvedTokenOptions } from '../token-options.js';

const INVALID = 'the refresh token is invalid, expired or revoked';

/**
 * Redeems a refresh token: it must be known, alive, and issued for this `service` (the spec's
 * "only good for this service"). Every refusal is the same `invalid_grant`, so a caller cannot
 * tell a revoked token from one issued for another service.
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
  return record;
}
