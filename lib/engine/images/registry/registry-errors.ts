import { EngineError } from '../../../engine-api/engine-error.js';
import { parseChallenge } from '../../../client/registry/index.js';

/** One entry of a registry's `{"errors":[…]}` body (distribution spec, "Error Codes"). */
export interface RegistryErrorEntry {
  code: string;
  message: string;
}

/**
 * A registry's refusal as the Docker client library reads it (distribution
 * registry/client/errors.go HandleErrorResponse): a Bearer challenge's RFC 6750 `error` first
 * (`insufficient_scope` → DENIED, `invalid_token` → UNAUTHORIZED, with `error_description` or the
 * code's default message), then the body's errors; a 401 with neither is UNAUTHORIZED
 * "authentication required".
 */
export function registryErrors(status: number, challengeHeader: string | null, body: string): RegistryErrorEntry[] {
  const entries: RegistryErrorEntry[] = [];
  const challenge = challengeHeader ? parseChallenge(challengeHeader) : undefined;
  if (challenge?.error === 'insufficient_scope') entries.push({ code: 'DENIED', message: 'requested access to the resource is denied' });
  if (challenge?.error === 'invalid_token') entries.push({ code: 'UNAUTHORIZED', message: 'authentication required' });
  try {
    const parsed = JSON.parse(body) as { errors?: unknown };
    if (Array.isArray(parsed.errors)) {
      for (const e of parsed.errors as Record<string, unknown>[]) {
        if (e && typeof e.code === 'string') entries.push({ code: e.code, message: typeof e.message === 'string' ? e.message : '' });
      }
    }
  } catch {
    // Not the registry error shape: judged by status below.
  }
  if (entries.length === 0 && status === 401) entries.push({ code: 'UNAUTHORIZED', message: 'authentication required' });
  return entries;
}

/** errcode.ErrorCode.Error(): the code in lower case with spaces (`MANIFEST_UNKNOWN` → `manifest unknown`). */
const codeWords = (code: string) => code.toLowerCase().replace(/_/g, ' ');

/**
 * The error dockerd gives for a refused pull (distribution/errors.go translatePullError and
 * notFoundError), from the first registry error: DENIED → `pull access denied for <name>,
 * repository does not exist or may require 'docker login': denied: <message>`, MANIFEST_UNKNOWN →
 * `manifest for <ref> not found: manifest unknown: <message>`, NAME_UNKNOWN → `repository <name>
 * not found: name unknown: <message>` (all 404, as dockerd's NotFound class); anything else is
 * `<code words>: <message>` with the status's class.
 *
 * @example
 * pullError('127.0.0.1:5000/alice/x:2', 404, [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }]).message
 * // 'manifest for 127.0.0.1:5000/alice/x:2 not found: manifest unknown: manifest unknown'
 */
export function pullError(ref: string, status: number, entries: RegistryErrorEntry[]): EngineError {
  const name = ref.includes('@') ? ref.slice(0, ref.indexOf('@')) : ref.slice(0, ref.lastIndexOf(':') > ref.lastIndexOf('/') ? ref.lastIndexOf(':') : ref.length);
  const first = entries[0];
  if (!first) return EngineError.fromStatus(status >= 400 ? status : 500, `unexpected registry answer: HTTP ${status}`);
  const cause = `${codeWords(first.code)}: ${first.message}`;
  switch (first.code) {
    case 'DENIED':
      return EngineError.notFound(`pull access denied for ${name}, repository does not exist or may require 'docker login': ${cause}`);
    case 'MANIFEST_UNKNOWN':
      return EngineError.notFound(`manifest for ${ref} not found: ${cause}`);
    case 'NAME_UNKNOWN':
      return EngineError.notFound(`repository ${name} not found: ${cause}`);
    default:
      return EngineError.fromStatus(status >= 400 && status < 600 ? status : 500, cause);
  }
}
