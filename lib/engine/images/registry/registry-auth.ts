import { EngineError } from '../../../engine-api/engine-error.js';

/** The credentials a client's `X-Registry-Auth` carries, in the forms dockgate can use. */
export type PullCredentials =
  | { kind: 'password'; username: string; password: string }
  /** An identity token from `docker login` is an OAuth refresh token for the registry's realm. */
  | { kind: 'identityToken'; username?: string; identityToken: string }
  /** A bearer token the client already has (`registrytoken`), sent to the registry as it is. */
  | { kind: 'registryToken'; registryToken: string };

const FIELDS = new Set(['username', 'password', 'auth', 'email', 'serveraddress', 'identitytoken', 'registrytoken']);

const invalid = (why: string) => EngineError.invalidParameter(`invalid X-Registry-Auth header: ${why}`);

/**
 * Decodes `X-Registry-Auth` as dockerd does (registry.DecodeAuthConfig): base64url (padding
 * optional; the standard alphabet is read too) of a JSON AuthConfig. `auth` is `base64(user:pass)`
 * as in config.json. An empty header or `{}` means anonymous (undefined). A field dockgate does not
 * know is refused by name rather than dropped.
 *
 * @example
 * decodeRegistryAuth(Buffer.from('{"username":"alice","password":"pw"}').toString('base64url'));
 * // { kind: 'password', username: 'alice', password: 'pw' }
 */
export function decodeRegistryAuth(header: string | undefined): PullCredentials | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(header.trim(), 'base64url').toString('utf8'));
  } catch {
    throw invalid('not base64url-encoded JSON');
  }
  // Go's json.Unmarshal of `null` into the AuthConfig leaves it empty: anonymous.
  if (body === null) return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) throw invalid('not a JSON object');
  const fields = body as Record<string, unknown>;
  for (const [name, value] of Object.entries(fields)) {
    if (!FIELDS.has(name)) throw invalid(`unknown field "${name}"`);
    if (value !== undefined && value !== null && typeof value !== 'string') throw invalid(`"${name}" must be a string`);
  }
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : '');
  let username = text('username');
  let password = text('password');
  if (text('auth')) {
    const decoded = Buffer.from(text('auth'), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) throw invalid('"auth" must be base64 of user:password');
    username = decoded.slice(0, colon);
    password = decoded.slice(colon + 1);
  }
  if (text('registrytoken')) return { kind: 'registryToken', registryToken: text('registrytoken') };
  if (text('identitytoken')) return { kind: 'identityToken', identityToken: text('identitytoken'), ...(username ? { username } : {}) };
  if (username || password) {
    if (!username) throw invalid('a password without a username');
    return { kind: 'password', username, password };
  }
  return undefined;
}
