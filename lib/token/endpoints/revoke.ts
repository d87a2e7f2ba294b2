import type { Request, RequestHandler, Response } from 'express';
import { setNoStore } from '../middleware/no-store.js';
import { OAuthError } from '../oauth-error.js';
import { refreshTokenId } from '../refresh/index.js';
import { callStore } from '../store-call.js';
import { revokeParams } from '../middleware/validate-params.js';
import type { ResolvedTokenOptions } from '../token-options.js';

/**
 * `POST /revoke`, RFC 7009. Possession of a refresh token is enough to revoke it (Docker's
 * clients are public clients, RFC 6749 §2.1). Unknown tokens still get 200 (§2.2: "invalid
 * tokens do not cause an error response"). Access tokens are JWTs that registries verify
 * offline, so asking to revoke one is `unsupported_token_type` (§2.2.1); they expire quickly.
 */
export function revokeHandler(options: ResolvedTokenOptions): RequestHandler {
  return async (req: Request, res: Response) => {
    const body = revokeParams(req);
    setNoStore(res);
    const token = body.token;
    const revoked = await callStore(() => options.refresh.store.revoke(refreshTokenId(token)), options.metrics);
    if (revoked) {
      options.audit?.({ type: 'refresh_token.revoked', account: '', ...(req.ip ? { ip: req.ip } : {}) }, req);
      res.status(200).end();
      return;
    }
    // §2.1: the hint only orders the search — a refresh token sent as "access_token" is still
    // revoked above, and an unknown hint value is ignored (the server "MAY ignore this parameter").
    if (body.token_type_hint === 'access_token') {
      throw new OAuthError('unsupported_token_type', 'access tokens cannot be revoked; they expire on their own');
    }
    res.status(200).end();
  };
}
