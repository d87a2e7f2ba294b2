import { isIP } from 'node:net';
import type { Readable } from 'node:stream';
import { parseChallenge, RegistryTokenClient, TokenFetchError, type RegistryCredentials } from '../../../client/registry/index.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { connectRefusalIn } from '../../../http/checked-fetch.js';
import type { PullCredentials } from './registry-auth.js';

/**
 * Whether dockerd would speak plain HTTP to a registry: loopback hosts (127.0.0.0/8, ::1,
 * `localhost`, which dockerd always treats as insecure) and the configured insecure registries.
 */
export function usesPlainHttp(host: string, insecure: ReadonlySet<string>): boolean {
  const lower = host.toLowerCase();
  if (insecure.has(lower)) return true;
  const hostname = lower.startsWith('[') ? lower.slice(1, lower.indexOf(']')) : lower.replace(/:\d+$/, '');
  if (hostname === 'localhost' || hostname === '::1') return true;
  return isIP(hostname) === 4 && hostname.startsWith('127.');
}

/** Go's url.Error spelling of a method (`Get`, `Head`), as the Docker client's messages show it. */
const verb = (method: string) => method[0] + method.slice(1).toLowerCase();

/** Options of {@link RegistrySession}. */
export interface RegistrySessionOptions {
  /** `host[:port]`; Docker Hub names are sent to registry-1.docker.io. */
  host: string;
  /** Repository path (`library/busybox`). */
  path: string;
  credentials: PullCredentials | undefined;
  insecure: ReadonlySet<string>;
  fetch: typeof fetch;
  signal?: AbortSignal;
  /**
   * The scopes a token is asked for. Defaults to `repository:<path>:pull`; a push asks for
   * `pull,push` on its repository and `pull` on the repositories it mounts blobs from.
   */
  scopes?: readonly string[];
}

/** What {@link RegistrySession.send} sends besides the method and URL. */
export interface RegistrySend {
  headers?: Record<string, string>;
  /** A buffer (resent after a challenge) or a stream (sent once: the session must already hold its token). */
  body?: Buffer | Readable;
  /** Aborts this request alone (a pull's other downloads after one failed), besides the session's own signal. */
  signal?: AbortSignal;
}

/**
 * One pull's conversation with a registry: answers its `WWW-Authenticate` challenge once with
 * dockgate's own token client (password grant, or the identity token as a refresh token for the
 * challenge's realm) for `repository:<path>:pull`, then sends that bearer token on every request.
 * A Basic challenge gets the password as Basic credentials. Credentials never leave for another
 * origin: the token client only talks to the realm, and fetch drops Authorization on redirects to
 * another origin (blob storage).
 */
export class RegistrySession {
  readonly base: string;
  readonly #o: RegistrySessionOptions;
  #authorization: string | undefined;

  /** `host/path` as references name the repository (`127.0.0.1:5000/alice/x`, `docker.io/library/busybox`). */
  get repository(): string {
    return `${this.#o.host}/${this.#o.path}`;
  }

  constructor(options: RegistrySessionOptions) {
    this.#o = options;
    const host = ['docker.io', 'index.docker.io'].includes(options.host) ? 'registry-1.docker.io' : options.host;
    this.base = `${usesPlainHttp(host, options.insecure) ? 'http' : 'https'}://${host}/v2/${options.path}`;
    if (options.credentials?.kind === 'registryToken') this.#authorization = `Bearer ${options.credentials.registryToken}`;
  }

  /** GETs `<base>/<suffix>`, authenticating on a 401 challenge and trying once more. */
  get(suffix: string, accept?: string, signal?: AbortSignal): Promise<Response> {
    return this.send('GET', suffix, { ...(accept ? { headers: { Accept: accept } } : {}), ...(signal ? { signal } : {}) });
  }

  /** Sends `method <base>/<suffix>`, authenticating on a 401 challenge and trying once more. */
  request(method: 'GET' | 'HEAD', suffix: string, accept?: string): Promise<Response> {
    return this.send(method, suffix, accept ? { headers: { Accept: accept } } : {});
  }

  /**
   * Sends `method` to `<base>/<target>`, or to `target` itself when it is a URL or an absolute
   * path (an upload's `Location`, resolved against the registry). A 401 challenge is answered
   * once and the request sent again, unless its body is a stream (which cannot be sent twice).
   * The bearer token goes only to the registry's own origin.
   */
  async send(method: string, target: string, init: RegistrySend = {}): Promise<Response> {
    const url = /^https?:/.test(target) || target.startsWith('/') ? new URL(target, this.base).href : `${this.base}/${target}`;
    const sameOrigin = new URL(url).origin === new URL(this.base).origin;
    const streamed = init.body !== undefined && !Buffer.isBuffer(init.body);
    const signals = [this.#o.signal, init.signal].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const go = () => {
      const headers: Record<string, string> = { ...init.headers };
      if (this.#authorization && sameOrigin) headers.Authorization = this.#authorization;
      return this.#o.fetch(url, {
        method, headers,
        ...(init.body !== undefined ? { body: init.body as unknown as RequestInit['body'], ...(streamed ? { duplex: 'half' } : {}) } : {}),
        ...(signal ? { signal } : {}),
      } as RequestInit).catch((err: unknown) => {
        if (signal?.aborted) throw err;
        // A connection the caller may not make (a tenant's, to a host the policy keeps out): 403 naming it.
        const refused = connectRefusalIn(err);
        if (refused) throw new EngineError('Forbidden', `${verb(method)} "${url}": ${refused.message}`);
        throw EngineError.system(`${verb(method)} "${url}": ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message}`);
      });
    };
    const first = await go();
    if (first.status !== 401 || streamed || !sameOrigin || this.#o.credentials?.kind === 'registryToken') return first;
    const header = first.headers.get('www-authenticate');
    const authorization = await this.#answer(header, `${verb(method)} "${url}"`);
    if (!authorization || authorization === this.#authorization) return first;
    await first.body?.cancel();
    this.#authorization = authorization;
    return go();
  }

  async #answer(header: string | null, request: string): Promise<string | undefined> {
    const creds = this.#o.credentials;
    if (header && /^\s*basic\b/i.test(header)) {
      return creds?.kind === 'password' ? `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}` : undefined;
    }
    const challenge = parseChallenge(header);
    if (!challenge) return undefined;
    let credentials: RegistryCredentials | undefined;
    if (creds?.kind === 'password') credentials = { username: creds.username, password: creds.password };
    if (creds?.kind === 'identityToken') credentials = { refreshToken: creds.identityToken, realm: challenge.realm };
    // dockerd sends the password to any realm; this engine, as its client does, only over https,
    // to loopback, or to the registries the operator declared insecure (plain http anyway).
    const client = new RegistryTokenClient({
      ...(credentials ? { credentials } : {}), offline: false, fetch: this.#o.fetch, clientId: 'dockgate', plainHttpPasswordHosts: [...this.#o.insecure],
    });
    try {
      const token = await client.token({ ...challenge, scopes: [] }, this.#o.scopes ?? [`repository:${this.#o.path}:pull`]);
      return `Bearer ${token}`;
    } catch (err) {
      if (!(err instanceof TokenFetchError)) throw err;
      const refused = connectRefusalIn(err);
      if (refused) throw new EngineError('Forbidden', `${request}: token realm ${challenge.realm}: ${refused.message}`);
      // As the Docker client reports a token endpoint's refusal: the request it was for, then why.
      const why = err.status === 401 || err.status === 400 ? 'unauthorized: authentication required' : err.message;
      throw new EngineError(err.status === 401 || err.status === 400 ? 'Unauthorized' : 'System', `${request}: ${why}`);
    }
  }
}
