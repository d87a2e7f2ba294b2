import type { Request, RequestHandler, Response } from 'express';
import { issueTokens, type IssuedTokens } from '../issue-tokens.js';
import { login } from '../grants/login.js';
import { redeemRefreshToken } from '../grants/refresh-token-grant.js';
import { OAuthError } from '../oauth-error.js';
import type { ResolvedTokenOptions } from '../token-options.js';
import { sendToken } from './send-token.js';
import { timedGrant } from './timed-grant.js';
import { checkService, requestedScopes } from './token-params.js';
import { postTokenParams } from '../middleware/validate-params.js';

function send(res: Response, tokens: IssuedTokens): void {
  sendToken(res, {
    access_token: tokens.accessToken,
    token_type: 'Bearer',
    expires_in: tokens.expiresIn,
    issued_at: tokens.issuedAt.toISOString(),
    scope: tokens.scope,
    ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
  });
}

/**
 * `POST /token`, the OAuth 2.0 form of the token protocol (distribution docs/spec/auth/oauth.md):
 * the password and refresh_token grants; `authorization_code` is reserved by the spec and
 * answered `unsupported_grant_type`.
 */
export function postTokenHandler(options: ResolvedTokenOptions): RequestHandler {
  return timedGrant(options, grantLabel, grant);

  async function grant(req: Request, res: Response): Promise<void> {
    const body = postTokenParams(req);
    const service = body.service;
    const clientId = body.client_id;
    const offline = body.access_type === 'offline';
    const ip = req.ip ?? '';
    const grantType = body.grant_type;
    if (grantType !== 'password' && grantType !== 'refresh_token') {
      throw new OAuthError('unsupported_grant_type', 'grant_type must be "password" or "refresh_token"');
    }
    checkService(options, service);
    const requested = requestedScopes(body.scope);
    if (grantType === 'password') {
      if (!body.username || body.password === undefined) throw new OAuthError('invalid_request', '"username" and "password" are required for the password grant');
      const identity = await login(options, { grant: 'password', username: body.username, password: body.password, service, clientId, ip, req });
      send(res, await issueTokens(options, {
        grant: 'password', subject: identity.subject, ...(identity.labels ? { labels: identity.labels } : {}),
        ...(identity.expiresAt ? { expiresAt: identity.expiresAt } : {}),
        service, clientId, ip, requested, issueRefreshToken: offline, req,
      }));
      return;
    }
    const token = body.refresh_token;
    if (!token) throw new OAuthError('invalid_request', '"refresh_token" is required for the refresh_token grant');
    const record = await redeemRefreshToken(options, token, service, clientId, ip, req);
    // The spec: with access_type=offline the refresh grant "will only return the same refresh
    // token and not a new one" — Docker discards rotated tokens anyway (static credential store).
    send(res, await issueTokens(options, {
      grant: 'refresh_token', subject: record.subject, ...(record.labels ? { labels: record.labels } : {}),
      service, clientId, ip, requested, issueRefreshToken: false, ...(offline ? { repeatRefreshToken: token } : {}), req,
    }));
  }
}

/** The grant type as a metric label: one of the two served, or `unsupported` (bounded, whatever was sent). */
function grantLabel(req: Request): string {
  const grantType = postTokenParams(req).grant_type;
  return grantType === 'password' || grantType === 'refresh_token' ? grantType : 'unsupported';
}
