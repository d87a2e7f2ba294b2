import { parseScopeList, ScopeSyntaxError, type ResourceScope } from '../../scope/index.js';
import { OAuthError } from '../oauth-error.js';
import type { ResolvedTokenOptions } from '../token-options.js';

/** Parses a scope parameter; a grammar error is RFC 6749 `invalid_scope`. */
export function requestedScopes(value: string | string[] | undefined): ResourceScope[] {
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
