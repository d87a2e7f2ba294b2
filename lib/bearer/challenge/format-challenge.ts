import { formatScope, type ResourceScope } from '../../scope/index.js';
import { quotedString } from '../../http/quoted-string.js';

/** RFC 6750 §3.1 error codes a registry sends in its challenge (always with status 401, as registries do). */
export type BearerChallengeError = 'invalid_token' | 'insufficient_scope';

/** What goes into a registry's `WWW-Authenticate: Bearer …` challenge. */
export interface BearerChallengeParams {
  /** The token endpoint URL. */
  realm: string;
  /** The service (token audience). */
  service: string;
  /** The access the request needs; omitted from the header when empty. */
  scopes?: readonly ResourceScope[];
  /** Omitted when no token was sent (RFC 6750 §3: "SHOULD NOT include an error code"). */
  error?: BearerChallengeError;
}

/**
 * Formats the challenge the way distribution's token access controller does:
 * `Bearer realm="…",service="…"[,scope="…"][,error="…"]`, scopes space-joined. Every value is a
 * quoted-string with `"` and `\` escaped.
 *
 * @example
 * formatBearerChallenge({ realm: 'https://auth.example/token', service: 'registry.example',
 *   scopes: [{ type: 'repository', name: 'alice/app', actions: ['pull'] }], error: 'insufficient_scope' })
 * // 'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:alice/app:pull",error="insufficient_scope"'
 */
export function formatBearerChallenge(params: BearerChallengeParams): string {
  let header = `Bearer realm=${quotedString(params.realm)},service=${quotedString(params.service)}`;
  if (params.scopes && params.scopes.length > 0) header += `,scope=${quotedString(params.scopes.map(formatScope).join(' '))}`;
  if (params.error) header += `,error=${quotedString(params.error)}`;
  return header;
}
