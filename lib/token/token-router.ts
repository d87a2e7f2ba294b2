import express, { type RequestHandler, type Router } from 'express';
import type { KeyRing } from '../keys/index.js';
import { getTokenHandler } from './endpoints/get-token.js';
import { jwksHandler } from './endpoints/jwks.js';
import { postTokenHandler } from './endpoints/post-token.js';
import { revokeHandler } from './endpoints/revoke.js';
import { noStore } from './middleware/no-store.js';
import { parseForm } from './middleware/parse-form.js';
import { rejectDuplicates } from './middleware/reject-duplicates.js';
import { tokenErrorHandler } from './middleware/token-error-handler.js';
import { validateGetParams, validatePostParams, validateRevokeParams } from './middleware/validate-params.js';
import { OAuthError } from './oauth-error.js';
import { refreshTokenId } from './refresh/index.js';
import { resolveTokenOptions, type ResolvedTokenOptions, type TokenOptions } from './token-options.js';

/** What a running token service offers the host besides its routes. */
export interface TokenService {
  /** The `iss` of every token. */
  readonly issuer: string;
  /** The services (audiences) tokens are issued for. */
  readonly services: readonly string[];
  /** The imported keys: `requireBearer` in the same process verifies with them, no configuration repeated. */
  readonly keyRing: KeyRing;
  /** Revokes one refresh token; resolves to whether it existed. */
  revokeRefreshToken(token: string): Promise<boolean>;
  /** Revokes every refresh token of an account (password change, removal); resolves to how many. */
  revokeSubject(subject: string): Promise<number>;
}

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
  router.post(resolved.tokenPath, noStore, ...parseForm(resolved.maxBodyBytes), rejectDuplicates('body'), ...validatePostParams(), postTokenHandler(resolved));
  router.get(resolved.tokenPath, noStore, rejectDuplicates('query', ['scope']), ...validateGetParams(), getTokenHandler(resolved));
  router.all(resolved.tokenPath, noStore, methodNotAllowed('GET, POST'));
  router.get(resolved.jwksPath, jwksHandler(resolved.keyRing));
  router.all(resolved.jwksPath, methodNotAllowed('GET, HEAD'));
  router.post(resolved.revokePath, noStore, ...parseForm(resolved.maxBodyBytes), rejectDuplicates('body'), ...validateRevokeParams(), revokeHandler(resolved));
  router.all(resolved.revokePath, noStore, methodNotAllowed('POST'));
  router.use(tokenErrorHandler(resolved.onError));
  const store = resolved.refresh.store;
  const tokenService: TokenService = {
    issuer: resolved.issuer,
    services: [...resolved.services],
    keyRing: resolved.keyRing,
    revokeRefreshToken: (token) => store.revoke(refreshTokenId(token)),
    revokeSubject: (subject) => store.revokeSubject(subject),
  };
  return Object.assign(router, { tokenService });
}
