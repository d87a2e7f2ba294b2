import { isLoopbackHost } from '../../http/loopback.js';
import { fetchToken, type TokenGrant } from './fetch-token.js';
import { parseChallenge, type BearerChallenge } from './parse-challenge.js';
import { TokenFetchError } from './token-fetch-error.js';

/** A password, or a refresh token (a Docker `identitytoken`) with the realm that issued it. */
export type RegistryCredentials =
  | { username: string; password: string }
  | { refreshToken: string; realm: string | URL };

/** Options of {@link RegistryTokenClient}. */
export interface RegistryTokenClientOptions {
  /** Who the client is. Defaults to none: anonymous token requests. */
  credentials?: RegistryCredentials;
  /** `client_id` sent to the authorization server. Defaults to `dockgate`. */
  clientId?: string;
  /** Ask for a refresh token with the password grant, and use it afterwards. Defaults to true. */
  offline?: boolean;
  /** Seconds before expiry at which a cached access token is no longer handed out. Defaults to 5. */
  expiryMargin?: number;
  /** Most access tokens kept (one per realm, service and scope list). Defaults to 100. */
  maxCachedTokens?: number;
  /** The fetch implementation. Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Milliseconds before one token exchange is abandoned. Defaults to 30000. */
  timeoutMs?: number;
  /** Current time in milliseconds. Defaults to `Date.now`. */
  now?: () => number;
  /**
   * Hosts (`host` or `host:port`, as in the realm URL) whose plain `http://` realm may be sent the
   * password. Without them a password goes only to an `https://` realm or one on a loopback host;
   * a challenge naming any other `http://` realm is refused with a TokenFetchError. Defaults to none.
   */
  plainHttpPasswordHosts?: readonly string[];
}

interface CachedToken {
  token: string;
  usableUntil: number;
}

function originOf(realm: string | URL): string {
  try {
    return new URL(realm).origin;
  } catch {
    throw new TokenFetchError('the challenge realm is not an absolute URL');
  }
}

/**
 * The client half of the registry token protocol: answers a registry's Bearer challenge with a
 * token, reusing access tokens until they expire and keeping the refresh token the
 * authorization server issues. A refresh token is only ever sent to the origin of the realm that
 * issued it (RFC 9700 §4.14.2: bound to its authorization server), never to a registry and never
 * to another realm.
 *
 * A password goes only where it cannot be read on the way: an `https://` realm, a realm on a
 * loopback host, or an `http://` realm whose host the caller named in `plainHttpPasswordHosts`.
 * Docker itself sends the password to whatever realm the registry's challenge names, `http://`
 * on another host included, so a hostile registry can collect it; this client refuses instead.
 *
 * @example
 * const client = new RegistryTokenClient({ credentials: { username: 'alice', password: 'pw' } });
 * const res = await client.fetch('http://127.0.0.1:5000/v2/alice/app/tags/list'); // 401 → token → retry
 */
export class RegistryTokenClient {
  readonly #options: RegistryTokenClientOptions;
  readonly #now: () => number;
  readonly #tokens = new Map<string, CachedToken>();
  /** Refresh tokens by the origin of the realm that issued them. */
  readonly #refreshTokens = new Map<string, string>();
  readonly #plainHttpHosts: ReadonlySet<string>;

  constructor(options: RegistryTokenClientOptions = {}) {
    const { credentials } = options;
    if (credentials !== undefined) {
      if ('refreshToken' in credentials) {
        if (typeof credentials.refreshToken !== 'string' || !credentials.refreshToken) throw new TypeError('"credentials.refreshToken" must be a non-empty string');
        let origin: string;
        try {
          origin = new URL(credentials.realm).origin;
        } catch {
          throw new TypeError('"credentials.realm" must be the absolute URL of the realm that issued the refresh token');
        }
        this.#refreshTokens.set(origin, credentials.refreshToken);
      } else if (typeof credentials.username !== 'string' || !credentials.username || typeof credentials.password !== 'string') {
        throw new TypeError('"credentials" must be { username, password } or { refreshToken, realm }');
      }
    }
    const margin = options.expiryMargin ?? 5;
    if (typeof margin !== 'number' || !(margin >= 0)) throw new TypeError('"expiryMargin" must be a non-negative number of seconds');
    const max = options.maxCachedTokens ?? 100;
    if (!Number.isInteger(max) || max < 1) throw new TypeError('"maxCachedTokens" must be a positive integer');
    const plainHosts = options.plainHttpPasswordHosts ?? [];
    if (!Array.isArray(plainHosts) || plainHosts.some((h) => typeof h !== 'string' || !/^[^\s/:@]+(:\d+)?$|^\[[0-9a-fA-F:.]+\](:\d+)?$/.test(h))) {
      throw new TypeError('"plainHttpPasswordHosts" must be a list of host or host:port names (no scheme or path)');
    }
    this.#plainHttpHosts = new Set(plainHosts.map((h) => h.toLowerCase()));
    this.#options = { ...options, expiryMargin: margin, maxCachedTokens: max };
    this.#now = options.now ?? Date.now;
  }

  /** Whether a refresh token is held for the realm's authorization server. */
  hasRefreshToken(realm: string | URL): boolean {
    return this.#refreshTokens.has(originOf(realm));
  }

  /**
   * An access token for the challenge (plus any extra scopes), from the cache while it is
   * usable, otherwise from the authorization server: the refresh token if one is held for this
   * realm's origin, else the password, else anonymously.
   *
   * @throws {TokenFetchError} when no token can be obtained.
   */
  async token(challenge: BearerChallenge, extraScopes: readonly string[] = []): Promise<string> {
    const scopes = [...new Set([...challenge.scopes, ...extraScopes])].sort();
    const key = `${challenge.realm}\u0000${challenge.service ?? ''}\u0000${scopes.join(' ')}`;
    const cached = this.#tokens.get(key);
    if (cached && this.#now() < cached.usableUntil) return cached.token;
    this.#tokens.delete(key);
    const origin = originOf(challenge.realm);
    const refreshToken = this.#refreshTokens.get(origin);
    const password = this.#passwordFor(challenge.realm, refreshToken === undefined);
    let response;
    if (refreshToken !== undefined) {
      try {
        response = await this.#exchange(challenge, scopes, { type: 'refresh_token', refreshToken, ...(password ?? {}) });
      } catch (err) {
        // A refused refresh token (revoked, expired: invalid_grant) is dropped; the password may still work.
        if (!(err instanceof TokenFetchError) || !password || (err.status !== 400 && err.status !== 401)) throw err;
        this.#refreshTokens.delete(origin);
      }
    }
    response ??= await this.#exchange(challenge, scopes, password ? { type: 'password', ...password } : { type: 'anonymous' });
    if (response.refreshToken) this.#refreshTokens.set(origin, response.refreshToken);
    const usableUntil = response.issuedAt.getTime() + (response.expiresIn - (this.#options.expiryMargin as number)) * 1000;
    this.#tokens.set(key, { token: response.token, usableUntil });
    if (this.#tokens.size > (this.#options.maxCachedTokens as number)) this.#tokens.delete(this.#tokens.keys().next().value as string);
    return response.token;
  }

  /**
   * Sends a registry request; on a 401 carrying a Bearer challenge, gets a token for it and
   * sends the request once more with `Authorization: Bearer`. The body must be resendable
   * (string, Buffer, URLSearchParams), not a stream. Only the access token goes to the registry.
   */
  async fetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
    const fetchImpl = this.#options.fetch ?? fetch;
    const first = await fetchImpl(input, init);
    if (first.status !== 401) return first;
    const challenge = parseChallenge(first.headers.get('www-authenticate'));
    if (!challenge) return first;
    await first.body?.cancel();
    const token = await this.token(challenge);
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${token}`);
    return fetchImpl(input, { ...init, headers });
  }

  /**
   * The password, when there is one and it may go to this realm. Where it may not, the request is
   * refused when the password was the only way in (`required`), else made without it.
   */
  #passwordFor(realm: string | URL, required: boolean): { username: string; password: string } | undefined {
    const credentials = this.#options.credentials;
    if (!credentials || !('password' in credentials)) return undefined;
    const url = new URL(realm);
    if (url.protocol === 'https:' || isLoopbackHost(url.hostname)) return credentials;
    if (url.protocol === 'http:' && (this.#plainHttpHosts.has(url.host.toLowerCase()) || this.#plainHttpHosts.has(url.hostname.toLowerCase()))) return credentials;
    if (!required) return undefined;
    throw new TokenFetchError(`refusing to send the password to ${url.origin}: the realm is plain http:// on a host that is not loopback (name it in "plainHttpPasswordHosts" to allow it)`);
  }

  #exchange(challenge: BearerChallenge, scopes: string[], grant: TokenGrant) {
    const o = this.#options;
    return fetchToken({
      realm: challenge.realm,
      ...(challenge.service !== undefined ? { service: challenge.service } : {}),
      scopes,
      grant,
      offline: o.offline ?? true,
      now: this.#now,
      ...(o.clientId !== undefined ? { clientId: o.clientId } : {}),
      ...(o.fetch ? { fetch: o.fetch } : {}),
      ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    });
  }
}
