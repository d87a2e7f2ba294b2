import type { RequestHandler } from 'express';
import { OAuthError } from '../oauth-error.js';

/**
 * client_ids whose POST repeats `scope` rather than space-joining it: containers/image
 * (skopeo, podman) in getBearerTokenOAuth2, used when it holds a Docker identity token.
 */
const REPEATED_SCOPE_CLIENTS = new Set(['containers/image']);

/**
 * RFC 6749 §3.2: request parameters "MUST NOT be included more than once". A field the parser
 * turned into an array (or, with an extended query parser, an object) is `invalid_request`.
 * `multi` lists the fields that may repeat (GET `scope`).
 */
export function rejectDuplicates(location: 'body' | 'query', multi: readonly string[] = []): RequestHandler {
  return (req, _res, next) => {
    const params = (location === 'body' ? req.body : req.query) as Record<string, unknown>;
    const clientId = params['client_id'];
    for (const [name, value] of Object.entries(params)) {
      if (typeof value === 'string') continue;
      const mayRepeat = multi.includes(name)
        || (name === 'scope' && location === 'body' && typeof clientId === 'string' && REPEATED_SCOPE_CLIENTS.has(clientId));
      if (mayRepeat && Array.isArray(value) && value.every((v) => typeof v === 'string')) continue;
      // The name is echoed only when it is one of ours: unknown names are request data.
      const shown = /^[a-z_]{1,32}$/.test(name) ? `"${name}"` : 'a parameter';
      next(new OAuthError('invalid_request', `${shown} must not be provided more than once`));
      return;
    }
    next();
  };
}
