import { TokenFetchError } from './token-fetch-error.js';

/** How the client proves who it is: a password, a refresh token, or nothing (anonymous). */
export type TokenGrant =
  | { type: 'password'; username: string; password: string }
  | { type: 'refresh_token'; refreshToken: string; username?: string; password?: string }
  | { type: 'anonymous' };

/** One token exchange. */
export interface TokenRequest {
  /** The challenge's realm: the token endpoint. */
  realm: string | URL;
  /** The challenge's service. */
  service?: string;
  /** Scopes to ask for (`type:name:actions`). */
  scopes: readonly string[];
  grant: TokenGrant;
  /** `client_id` sent with POST and offline GET. Defaults to `dockgate`. */
  clientId?: string;
  /** Ask for a refresh token (`access_type=offline` / `offline_token=true`). Defaults to false. */
  offline?: boolean;
  /** The fetch implementation. Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** Milliseconds before the exchange is abandoned. Defaults to 30000. */
  timeoutMs?: number;
  /** Current time in milliseconds. Defaults to `Date.now`. */
  now?: () => number;
}

/** An access token and when it stops being usable; the token itself is opaque and never parsed. */
export interface TokenResponse {
  token: string;
  /** Lifetime in seconds: `expires_in`, 60 when absent (and at least 60, as Docker reads it). */
  expiresIn: number;
  /** `issued_at`, or when the exchange completed when it is absent or unreadable. */
  issuedAt: Date;
  /** A refresh token, when the server issued one. */
  refreshToken?: string;
  /** Whether the answer came from the GET fallback. */
  method: 'POST' | 'GET';
}

function realmUrl(realm: string | URL): URL {
  let url: URL;
  try {
    url = new URL(realm);
  } catch {
    throw new TokenFetchError('the challenge realm is not an absolute URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TokenFetchError('the challenge realm is not an http(s) URL');
  return url;
}

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

async function exchange(request: TokenRequest, method: 'POST' | 'GET'): Promise<Response> {
  const url = realmUrl(request.realm);
  const clientId = request.clientId ?? 'dockgate';
  const headers: Record<string, string> = { Accept: 'application/json' };
  const init: RequestInit = { method, headers, redirect: 'error', signal: AbortSignal.timeout(request.timeoutMs ?? 30_000) };
  const { grant } = request;
  if (method === 'POST') {
    // distribution docs/spec/auth/oauth.md: service, client_id and grant_type are required; scope once, space-separated.
    const form = new URLSearchParams({ service: request.service ?? '', client_id: clientId, grant_type: grant.type });
    if (grant.type === 'password') {
      form.set('username', grant.username);
      form.set('password', grant.password);
      if (request.offline) form.set('access_type', 'offline');
    } else if (grant.type === 'refresh_token') {
      form.set('refresh_token', grant.refreshToken);
    }
    if (request.scopes.length > 0) form.set('scope', request.scopes.join(' '));
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    init.body = form.toString();
  } else {
    // The Docker token protocol's GET: repeated scope, Basic auth; a refresh token is never put in a URL.
    if (request.service !== undefined) url.searchParams.set('service', request.service);
    for (const scope of request.scopes) url.searchParams.append('scope', scope);
    if ((grant.type === 'password' || grant.type === 'refresh_token') && grant.username !== undefined && grant.password !== undefined) {
      url.searchParams.set('account', grant.username);
      headers.Authorization = basic(grant.username, grant.password);
      if (request.offline) {
        url.searchParams.set('offline_token', 'true');
        url.searchParams.set('client_id', clientId);
      }
    }
  }
  const fetchImpl = request.fetch ?? fetch;
  try {
    return await fetchImpl(url, init);
  } catch (err) {
    throw new TokenFetchError(`token request to ${url.origin} failed`, { cause: err });
  }
}

async function readBody(res: Response): Promise<Record<string, unknown>> {
  try {
    const body: unknown = await res.json();
    return body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * One token exchange with a registry's authorization server: POST with the password or
 * refresh_token grant (distribution's OAuth spec), falling back to the GET token protocol when the
 * server answers 404 or 405 (the spec's note; GCR answers 404). Anonymous requests use GET, as
 * Docker does. The token is opaque: only the JSON fields around it are read.
 *
 * @example
 * const { token, expiresIn } = await fetchToken({ realm: 'https://auth.example/token', service: 'registry.example',
 *   scopes: ['repository:alice/app:pull'], grant: { type: 'password', username: 'alice', password: 'pw' } });
 * @throws {TokenFetchError} when the server refuses, cannot be reached, or answers without a token.
 */
export async function fetchToken(request: TokenRequest): Promise<TokenResponse> {
  let method: 'POST' | 'GET' = request.grant.type === 'anonymous' ? 'GET' : 'POST';
  let res = await exchange(request, method);
  if (method === 'POST' && (res.status === 404 || res.status === 405)) {
    await res.body?.cancel();
    method = 'GET';
    res = await exchange(request, method);
  }
  const completedAt = (request.now ?? Date.now)();
  const body = await readBody(res);
  if (!res.ok) {
    const oauthError = typeof body.error === 'string' ? body.error : undefined;
    throw new TokenFetchError(`the authorization server refused the token request (HTTP ${res.status}${oauthError ? `, ${oauthError}` : ''})`, {
      status: res.status,
      ...(oauthError ? { oauthError } : {}),
    });
  }
  // distribution token.md: `token` and/or `access_token`; the OAuth form always has access_token.
  const token = typeof body.access_token === 'string' && body.access_token ? body.access_token : body.token;
  if (typeof token !== 'string' || token.length === 0) throw new TokenFetchError('the authorization server answered without a token', { status: res.status });
  // token.md: "When omitted, this defaults to 60 seconds"; Docker raises shorter lifetimes to 60.
  const expiresIn = typeof body.expires_in === 'number' && Number.isFinite(body.expires_in) ? Math.max(60, body.expires_in) : 60;
  const issued = typeof body.issued_at === 'string' ? Date.parse(body.issued_at) : NaN;
  const refreshToken = typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : undefined;
  return {
    token,
    expiresIn,
    issuedAt: new Date(Number.isNaN(issued) ? completedAt : issued),
    ...(refreshToken ? { refreshToken } : {}),
    method,
  };
}
