import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { DockgateError } from '../errors/dockgate-error.js';

/** One connection about to be made: the URL's host and port, and the address the host resolved to. */
export interface ConnectTarget {
  /** The URL's host name, lower case, IPv6 without brackets (`registry.example.com`, `::1`). */
  readonly host: string;
  /** The port connected to (the URL's, else 80 or 443). */
  readonly port: number;
  /** The IP address the connection goes to (the host itself when it is an IP). */
  readonly address: string;
}

/** Asked before each connection: a reason refuses it, undefined lets it through. */
export type ConnectCheck = (target: ConnectTarget) => string | undefined;

/** A connection {@link checkedFetch} refused before it was made; the message is the check's reason. */
export class ConnectRefusedError extends DockgateError {
  static override code = 'ERR_CONNECT_REFUSED';
  override readonly code = 'ERR_CONNECT_REFUSED';
}

/** The refusal somewhere in an error's `cause` chain (fetch and token errors wrap it). */
export function connectRefusalIn(error: unknown): ConnectRefusedError | undefined {
  for (let e = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    if (e instanceof ConnectRefusedError) return e;
  }
  return undefined;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([204, 205, 304]);
const MAX_REDIRECTS = 20;

type Body = string | Buffer | Uint8Array | URLSearchParams | Readable;

/**
 * A `fetch` whose every connection is checked where it is made: the host name is resolved by
 * the socket's own `lookup` and each address it yields goes through `check`, so a name that
 * resolves to loopback, a redirect to another host, or a token realm on another host is refused
 * before any byte leaves (a check done earlier, on the name, would be raced by DNS). Redirects
 * are followed here (each hop a new, checked connection; `Authorization` dropped across
 * origins, as fetch does). No connection is reused across requests. It speaks HTTP/1.1 over
 * node:http(s) and takes what the registry clients send: string, Buffer, URLSearchParams or a
 * Node stream bodies, `headers`, `signal`, `redirect`.
 *
 * @example
 * const guarded = checkedFetch(({ address }) => (address.startsWith('127.') ? 'loopback is refused' : undefined));
 * await guarded('http://localhost:8080/'); // rejects: TypeError('fetch failed') caused by ConnectRefusedError
 */
export function checkedFetch(check: ConnectCheck): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (typeof input !== 'string' && !(input instanceof URL)) throw new TypeError('checkedFetch takes a URL (string or URL), not a Request');
    let url = new URL(input);
    let method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    let body = init.body as Body | null | undefined;
    for (let hop = 0; ; hop++) {
      const res = await once(url, method, headers, body, init.signal ?? undefined, check);
      const location = res.headers.location;
      if (!REDIRECTS.has(res.statusCode ?? 0) || location === undefined || init.redirect === 'manual') return response(res, method);
      res.resume();
      if (init.redirect === 'error') throw new TypeError('fetch failed', { cause: new Error(`redirect to ${location} (redirect: "error")`) });
      if (hop >= MAX_REDIRECTS) throw new TypeError('fetch failed', { cause: new Error('redirect count exceeded') });
      const next = new URL(location, url);
      if (next.origin !== url.origin) headers.delete('authorization');
      if (res.statusCode === 303 || ((res.statusCode === 301 || res.statusCode === 302) && method === 'POST')) {
        if (method !== 'HEAD') method = 'GET';
        body = undefined;
        headers.delete('content-type');
        headers.delete('content-length');
      } else if (body instanceof Readable) {
        throw new TypeError('fetch failed', { cause: new Error('cannot follow a redirect with a streamed body') });
      }
      url = next;
    }
  }) as typeof fetch;
}

/** One request on a new, checked connection; resolves with the response head. */
function once(url: URL, method: string, headers: Headers, body: Body | null | undefined, signal: AbortSignal | undefined, check: ConnectCheck): Promise<IncomingMessage> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new TypeError('fetch failed', { cause: new Error(`unsupported protocol ${url.protocol}`) }));
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  const port = url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port);
  // An IP connects without a lookup: it is checked as it stands.
  const refusal = isIP(host) !== 0 ? check({ host, port, address: host }) : undefined;
  if (refusal !== undefined) return Promise.reject(new TypeError('fetch failed', { cause: new ConnectRefusedError(refusal) }));
  const lookup = (name: string, options: LookupOptions, callback: (err: Error | null, address: string | LookupAddress[], family?: number) => void) => {
    dnsLookup(name, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      for (const { address } of addresses) {
        const why = check({ host, port, address });
        if (why !== undefined) return callback(new ConnectRefusedError(why), '');
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
  const flat: Record<string, string> = {};
  headers.forEach((value, key) => {
    flat[key] = value;
  });
  const payload = body instanceof URLSearchParams ? body.toString() : body;
  if (payload !== undefined && payload !== null && !(payload instanceof Readable) && flat['content-length'] === undefined) flat['content-length'] = String(Buffer.byteLength(payload));
  if (body instanceof URLSearchParams && flat['content-type'] === undefined) flat['content-type'] = 'application/x-www-form-urlencoded;charset=UTF-8';
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, { method, headers: flat, agent: false, lookup: lookup as never, ...(signal ? { signal } : {}) }, resolve);
    req.on('error', (err) => reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: err })));
    if (payload instanceof Readable) payload.on('error', (err) => req.destroy(err)).pipe(req);
    else req.end(payload ?? undefined);
  });
}

/** The response head and its streamed body as a WHATWG Response. */
function response(res: IncomingMessage, method: string): Response {
  const status = res.statusCode ?? 0;
  const headers = new Headers();
  for (let i = 0; i < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
  if (status < 200 || status > 599) {
    res.destroy();
    throw new TypeError('fetch failed', { cause: new Error(`unexpected HTTP status ${status}`) });
  }
  if (method === 'HEAD' || NULL_BODY.has(status)) {
    res.resume();
    return new Response(null, { status, statusText: res.statusMessage ?? '', headers });
  }
  const body = Readable.toWeb(res) as unknown as WebReadableStream<Uint8Array>;
  return new Response(body as unknown as ReadableStream<Uint8Array>, { status, statusText: res.statusMessage ?? '', headers });
}
