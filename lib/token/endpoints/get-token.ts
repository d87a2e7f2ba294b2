import type { Request, RequestHandler, Response } from 'express';
import type { Identity } from '../authn/types.js';
import { parseBasicCredentials } from '../basic-credentials.js';
import { issueTokens } from '../issue-tokens.js';
import { login } from '../grants/login.js';
import { OAuthError } from '../oauth-error.js';
import type { ResolvedTokenOptions } from '../token-options.js';
import { sendToken } from './send-token.js';
import { timedGrant } from './timed-grant.js';
import { checkService, requestedScopes } from './token-params.js';
import { getTokenParams } from '../middleware/validate-params.js';

/**
 * `GET /token`, the Docker token protocol (distribution docs/spec/auth/token.md), what
 * `docker login`, skopeo and containerd's fallback use: Basic credentials or anonymous,
 * repeated `scope`, `offline_token=true` for a refresh token.
 */
export function getTokenHandler(options: ResolvedTokenOptions): RequestHandler {
  return timedGrant(options, grantLabel, grant);

  async function grant(req: Request, res: Response): Promise<void> {
    const query = getTokenParams(req);
    const service = query.service;
    const clientId = query.client_id ?? '';
    const ip = req.ip ?? '';
    checkService(options, service);
    const requested = requestedScopes(query.scope);
    const challenge = { 'WWW-Authenticate': options.basicChallenge };
    const credentials = parseBasicCredentials(req.get('authorization'));
    if (credentials === null) throw new OAuthError('invalid_client', 'the Authorization header must hold Basic credentials', { headers: challenge });
    let identity: Identity;
    if (credentials === undefined) {
      if (!options.allowAnonymous) throw new OAuthError('invalid_client', 'authentication required', { headers: challenge });
      identity = { subject: '' };
    } else {
      // `account` is what the client says it acts as (docker sends the login name): it must be
      // the authenticated user, or one account's credentials could be passed off as another's.
      const account = query.account;
      if (account !== undefined && account !== '' && account !== credentials.username) {
        throw new OAuthError('invalid_request', '"account" does not match the authenticated user');
      }
      identity = await login(options, { grant: 'basic', ...credentials, service, clientId, ip, req });
    }
    const anonymous = credentials === undefined;
    const tokens = await issueTokens(options, {
      grant: anonymous ? 'anonymous' : 'basic', subject: identity.subject, ...(identity.labels ? { labels: identity.labels } : {}),
      ...(identity.expiresAt ? { expiresAt: identity.expiresAt } : {}),
      service, clientId, ip, requested,
      // The spec: a refresh token only for offline_token=true, and only to an authenticated caller.
      issueRefreshToken: query.offline_token === 'true' && !anonymous,
      req,
    });
    sendToken(res, {
      token: tokens.accessToken,
      access_token: tokens.accessToken,
      expires_in: tokens.expiresIn,
      issued_at: tokens.issuedAt.toISOString(),
      // Granted scope as in the POST answer (RFC 6749 §5.1), empty when nothing was granted.
      scope: tokens.scope,
      ...(tokens.refreshToken ? { refresh_token: tokens.refreshToken } : {}),
    });
  }
}

/** GET serves Basic logins and anonymous requests: the grant label says which. */
function grantLabel(req: Request): string {
  return req.headers.authorization === undefined ? 'anonymous' : 'basic';
}
