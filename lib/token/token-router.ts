import express, { type RequestHandler, type Router } from 'express';
import { getTokenHandler } from './endpoints/get-token.js';
import { jwksHandler } from './endpoints/jwks.js';
import { postTokenHandler } from './endpoints/post-token.js';
import { revokeHandler } from './endpoints/revoke.js';
import { noStore } from './middleware/no-store.js';
import { parseForm } from './middleware/parse-form.js';
import { tokenErrorHandler } from './middleware/token-error-handler.js';
import { validateGetParams, validatePostParams, validateRevokeParams } from './middleware/validate-params.js';
import { refusalRecorder } from './events/refusal-event.js';
import { OAuthError } from './oauth-error.js';
import { refreshTokenId } from './refresh/index.js';
import { linkTokenRouter } from './token-router-link.js';
import type { TokenService } from './token-service.js';
import { resolveTokenOptions, type ResolvedTokenOptions, type TokenOptions } from './token-options.js';

export type { TokenService } from './token-service.js';

/** An Express router serving the token endpoint, with its {@link TokenService}. */
export type TokenRouter = Router & { readonly tokenService: TokenService };

const methodNotAllowed = (allow: string): RequestHandler => (_req, res, next) => {
  res.set('Allow', allow);
  // 405 (not 403): containerd falls back from POST to GET on 404/405 only.
  next(new OAuthError('invalid_request', 'method not allowed here', { status: 405 }));
};

/**
 * The registry token service: `POST` (OAuth 2.0 password and refresh_token grants) and `GET`
 * (Docker token protocol, Basic or anonymous) on `tokenPath`, the public JWKS on `jwksPath`
 * and RFC 7009 revocation on `revokePath`. Options are validated and keys imported here, once.
 *
 * @example
 * app.use(tokenRouter({
 *   issuer: 'dockgate', service: 'registry.local',
 *   keys: { privateKey: readFileSync('key.pem'), certificateChain: readFileSync('cert.pem') },
 *   authenticate: htpasswdAuthenticator({ file: 'users.htpasswd' }),
 *   authorize: aclAuthorizer(ownNamespaceAcl()),
 * }));
 */
export function tokenRouter(options: TokenOptions): TokenRouter {
  const resolved: ResolvedTokenOptions = resolveTokenOptions(options);
  const router = express.Router();
  // Each route is its shortest chain: parse, one validation pass, the handler. The no-store
  // headers are written with the answer itself (sendToken, writeOAuthError), not by a layer.
  const form = parseForm(resolved.maxBodyBytes);
  router.post(resolved.tokenPath, form, validatePostParams(), postTokenHandler(resolved));
  router.get(resolved.tokenPath, validateGetParams(), getTokenHandler(resolved));
  router.all(resolved.tokenPath, noStore, methodNotAllowed('GET, POST'));
  router.get(resolved.jwksPath, jwksHandler(resolved.keyRing));
  router.all(resolved.jwksPath, methodNotAllowed('GET, HEAD'));
  router.post(resolved.revokePath, form, validateRevokeParams(), revokeHandler(resolved));
  router.all(resolved.revokePath, noStore, methodNotAllowed('POST'));
  router.use(tokenErrorHandler(resolved.onError, refusalRecorder(resolved.audit)));
  const store = resolved.refresh.store;
  const tokenService: TokenService = {
    issuer: resolved.issuer,
    services: [...resolved.services],
    keyRing: resolved.keyRing,
    revokeRefreshToken: async (token) => {
      const revoked = await store.revoke(refreshTokenId(token));
      if (revoked) resolved.metrics?.refreshTokens.inc({ event: 'revoked' });
      return revoked;
    },
    revokeSubject: async (subject) => {
      const count = await store.revokeSubject(subject);
      if (count > 0) resolved.metrics?.refreshTokens.inc({ event: 'revoked' }, count);
      return count;
    },
  };
  // requireBearer(scope) in the same app finds this router through the app's router stack.
  linkTokenRouter(router, {
    tokenService, tokenPath: resolved.tokenPath, onError: resolved.onError,
    ...(resolved.realm !== undefined ? { realm: resolved.realm } : {}), ...(resolved.metrics ? { metrics: resolved.metrics } : {}),
  });
  return Object.assign(router, { tokenService });
}
