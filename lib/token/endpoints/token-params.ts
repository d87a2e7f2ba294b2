import { parseScopeList, ScopeSyntaxError, type ResourceScope } from '../../scope/index.js';
import { OAuthError } from '../oauth-error.js';
import type { ResolvedTokenOptions } from '../token-options.js';

/**
 * Most resource scopes one token request may name. Docker and containerd ask for one repository
 * per request, two or three on a push that mounts a blob from another repository (`push,pull` on
 * the target, `pull` on each source); BuildKit asks for a handful when it pulls cache from several
 * places. 32 leaves ample room for them and stops one request from making the authorizer judge
 * hundreds of names (a report saw 400 granted in one GET).
 */
export const MAX_SCOPES = 32;

/** How many scope entries a parameter holds (space-separated, repeatable), without parsing them. */
function countScopes(value: unknown): number {
  const values = typeof value === 'string' ? [value] : Array.isArray(value) ? value : [];
  let count = 0;
  for (const entry of values) if (typeof entry === 'string') for (const part of entry.split(' ')) if (part.length > 0) count += 1;
  return count;
}

/**
 * Parses a scope parameter; more than {@link MAX_SCOPES} entries is RFC 6749 `invalid_request`
 * (the request is malformed, not a scope refused), a grammar error `invalid_scope`.
 */
export function requestedScopes(value: string | string[] | undefined): ResourceScope[] {
  const count = countScopes(value);
  if (count > MAX_SCOPES) throw new OAuthError('invalid_request', `"scope" names ${count} resource scopes; at most ${MAX_SCOPES} are accepted in one request`);
  try {
    return parseScopeList(value);
  } catch (err) {
    if (err instanceof ScopeSyntaxError) throw new OAuthError('invalid_scope', `the requested scope is malformed: ${err.message}`);
    throw err;
  }
}

/** Rejects a service this token server does not issue for. */
export function checkService(options: ResolvedTokenOptions, service: string): void {
  if (!options.services.has(service)) throw new OAuthError('invalid_request', 'tokens are not issued for this service');
}
