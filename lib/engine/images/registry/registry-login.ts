import { fetchToken, parseChallenge, TokenFetchError } from '../../../client/registry/index.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { connectRefusalIn } from '../../../http/checked-fetch.js';
import { usesPlainHttp } from './registry-session.js';
import type { RegistryLoginRequest, RegistryLoginResult } from '../../../engine-api/registry-login-types.js';

export type { RegistryLoginRequest, RegistryLoginResult } from '../../../engine-api/registry-login-types.js';

/** Docker Hub's login address as the CLI sends it, and where its registry really is. */
const HUB = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io']);

/**
 * `docker login` done by the engine, as dockerd does it (registry/auth.go loginV2): `GET /v2/`;
 * a Bearer challenge is answered at its realm with the password grant (or the identity token as a
 * refresh token), asking for a refresh token (`offline_token`, client_id `docker`), which is
 * answered as the IdentityToken; a Basic challenge is answered with the password. Refusals
 * carry dockerd's words: 401 `Get "<url>": unauthorized: <reason>`, an unreachable registry 500
 * `Get "<url>": <cause>`. Plain HTTP for loopback and `insecure` registries, HTTPS otherwise.
 */
export async function registryLogin(body: RegistryLoginRequest, insecure: ReadonlySet<string>, fetchImpl: typeof fetch = fetch): Promise<RegistryLoginResult> {
  for (const field of ['username', 'password', 'serveraddress', 'identitytoken'] as const) {
    if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'string') throw EngineError.invalidParameter(`${field} must be a string`);
  }
  const host = registryHost(body.serveraddress ?? '');
  const url = `${usesPlainHttp(host, insecure) ? 'http' : 'https'}://${host}/v2/`;
  const request = `Get "${url}"`;
  const get = (authorization?: string) => fetchImpl(url, { headers: authorization ? { Authorization: authorization } : {} }).catch((err: unknown) => {
    const refused = connectRefusalIn(err);
    if (refused) throw new EngineError('Forbidden', `${request}: ${refused.message}`);
    const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    throw EngineError.system(`${request}: ${cause}`);
  });
  const first = await get();
  await first.body?.cancel();
  if (first.ok) return { Status: 'Login Succeeded' };
  if (first.status !== 401) throw EngineError.system(`${request}: unexpected status ${first.status}`);
  const username = body.username ?? '';
  const password = body.password ?? '';
  const header = first.headers.get('www-authenticate');
  if (header && /^\s*basic\b/i.test(header)) {
    const answer = await get(`Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`);
    await answer.body?.cancel();
    if (answer.ok) return { Status: 'Login Succeeded' };
    throw new EngineError('Unauthorized', `${request}: unauthorized: ${username === '' ? 'authentication required' : 'invalid username or password'}`);
  }
  const challenge = parseChallenge(header);
  if (!challenge) throw EngineError.system(`${request}: the registry's 401 carries no usable challenge`);
  const identity = body.identitytoken ?? '';
  if (identity === '' && username === '' && password === '') throw new EngineError('Unauthorized', `${request}: unauthorized: authentication required`);
  try {
    const token = await fetchToken({
      realm: challenge.realm,
      ...(challenge.service ? { service: challenge.service } : {}),
      scopes: [],
      grant: identity !== '' ? { type: 'refresh_token', refreshToken: identity, ...(username ? { username } : {}) } : { type: 'password', username, password },
      clientId: 'docker',
      offline: true,
      fetch: fetchImpl,
    });
    return { Status: 'Login Succeeded', ...(token.refreshToken ? { IdentityToken: token.refreshToken } : identity !== '' ? { IdentityToken: identity } : {}) };
  } catch (err) {
    if (!(err instanceof TokenFetchError)) throw err;
    const refused = connectRefusalIn(err);
    if (refused) throw new EngineError('Forbidden', `${request}: token realm ${challenge.realm}: ${refused.message}`);
    if (err.status === 401 || err.status === 400) {
      throw new EngineError('Unauthorized', `${request}: unauthorized: ${username === '' && identity === '' ? 'authentication required' : 'invalid username or password'}`);
    }
    throw EngineError.system(`${request}: ${err.message}`);
  }
}

/** `serveraddress` as the CLI sends it (`127.0.0.1:5000`, `https://index.docker.io/v1/`) → `host[:port]`. */
export function registryHost(serverAddress: string): string {
  const trimmed = serverAddress.trim().replace(/^https?:\/\//i, '').replace(/\/.*$/, '');
  if (trimmed === '' || HUB.has(trimmed.toLowerCase())) return 'registry-1.docker.io';
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-fA-F:]+\](:\d{1,5})?$/.test(trimmed)) throw EngineError.invalidParameter(`serveraddress "${serverAddress}" is not a registry host`);
  return trimmed;
}
