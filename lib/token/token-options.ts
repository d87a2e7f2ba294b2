import type { Request } from 'express';
import { isQuotable, quotedString } from '../http/quoted-string.js';
import { booleanOption, httpUrl, integerOption, nonEmptyString, optionalFunction } from '../options/option-checks.js';
import { loadKeyRing, type KeyRing, type SigningKeyInput } from '../keys/index.js';
import type { AuditHook, TokenEventSink } from './audit.js';
import { loggingOnError, tokenEventSink } from './events/token-events.js';
import { resolveLogger, type DockgateLogger } from '../logging/index.js';
import { resolveMetrics, type DockgateMetrics, type MetricsOptions } from '../metrics/index.js';
import type { Authenticator } from './authn/types.js';
import type { Authorizer } from './authz/types.js';
import { MemoryRefreshTokenStore, type RefreshTokenStore } from './refresh/index.js';
import { LoginThrottle, type ThrottleOptions } from './throttle/index.js';

/** Refresh-token policy. */
export interface RefreshTokenOptions {
  /** Where refresh tokens are kept. Defaults to a new {@link MemoryRefreshTokenStore}. */
  store?: RefreshTokenStore;
  /** Seconds a refresh token lives without being used (RFC 9700 §4.14.2). Defaults to 2592000 (30 days). */
  idleTtl?: number;
  /** Seconds a refresh token lives at most, however often used. Defaults to 7776000 (90 days). */
  absoluteTtl?: number;
  /**
   * Refuse a refresh token presented with another `client_id` than the one it was issued to.
   * Off by default because `docker login` stores its token in ~/.docker/config.json, where
   * skopeo (`containers/image`) and containerd read it and send their own client ids.
   * Defaults to false.
   */
  bindClientId?: boolean;
  /**
   * Most live refresh tokens one account keeps (each `docker login` makes one); issuing one more
   * revokes the account's oldest, so one account cannot fill the store. Defaults to 100: a person's
   * machines and a CI account's concurrent jobs stay far below it.
   */
  maxPerSubject?: number;
}

/** Options of {@link tokenRouter}. */
export interface TokenOptions {
  /** The `iss` claim; must equal the registry's `auth.token.issuer`. Required. */
  issuer: string;
  /** The service name(s) tokens may be issued for (the `aud` claim; the registry's `auth.token.service`). Required. */
  service: string | readonly string[];
  /** Signing key(s). The first signs; all are published in the JWKS and verify (for rotation). Required. */
  keys: SigningKeyInput | readonly SigningKeyInput[];
  /** Checks a username and password. Required unless only anonymous access is served. */
  authenticate?: Authenticator;
  /** Decides what an account may do. Defaults to denying everything (tokens with empty `access`). */
  authorize?: Authorizer;
  /** Serve GET requests without credentials, with subject `""`. Defaults to false. */
  allowAnonymous?: boolean;
  /** Access-token lifetime in seconds, at least 60 (clients treat less as 60). Defaults to 300. */
  accessTokenTtl?: number;
  /** Refresh-token policy. Defaults as documented on each field. */
  refreshTokens?: RefreshTokenOptions;
  /**
   * Brute-force throttle for password logins, or false to turn it off. Give it a shared
   * `store` (a RedisThrottleStore) when several instances serve one registry. Defaults to the
   * documented limits, counted in this instance's memory.
   */
  throttle?: ThrottleOptions | false;
  /** Called with every decision, never with a secret. Defaults to none. */
  audit?: AuditHook;
  /**
   * A pino (or pino-compatible) logger: one line per token decision (subject, client_id,
   * service, granted scope, result, client address), never a password or token. A request's
   * own `req.log` child, when the host sets one, is used instead so its request id is on the
   * line. Defaults to none.
   */
  logger?: DockgateLogger;
  /** Prometheus metrics (prom-client): `{ registry, prefix }`, shared with bearerGuard and engineRouter. Defaults to none. */
  metrics?: MetricsOptions;
  /**
   * Called with errors not meant for the client (store failures, hook exceptions); the client
   * gets `server_error` or `temporarily_unavailable`. The request is passed for context: never
   * log its headers or body (Authorization, passwords). Defaults to writing name, code and
   * message to `logger` at error level, or to stderr without a logger.
   */
  onError?: (err: unknown, req?: Request) => void;
  /** Realm of the `WWW-Authenticate: Basic` challenge on bad credentials. Defaults to the issuer. */
  basicRealm?: string;
  /**
   * The token endpoint's public URL, as clients must reach it: the `realm` of the challenges of
   * `requireBearer(scope)` in the same app. Give it behind a proxy that rewrites paths or hosts.
   * Defaults to the token route as mounted, on the request's protocol and Host
   * (`'trust proxy'` decides whether X-Forwarded-Proto/Host count).
   */
  realm?: string | URL;
  /** Path of the token endpoint inside the router. Defaults to `/token`. */
  tokenPath?: string;
  /** Path of the JWKS document inside the router. Defaults to `/jwks`. */
  jwksPath?: string;
  /** Path of the RFC 7009 revocation endpoint inside the router. Defaults to `/revoke`. */
  revokePath?: string;
  /** Largest accepted form body, in bytes. Defaults to 16384. */
  maxBodyBytes?: number;
}

/** Options after defaults and validation: what the handlers read. */
export interface ResolvedTokenOptions {
  issuer: string;
  services: ReadonlySet<string>;
  keyRing: KeyRing;
  authenticate?: Authenticator;
  authorize: Authorizer;
  allowAnonymous: boolean;
  accessTokenTtl: number;
  refresh: { store: RefreshTokenStore; idleTtlMs: number; absoluteTtlMs: number; bindClientId: boolean; maxPerSubject: number };
  throttle?: LoginThrottle;
  /** Where decisions go (metrics, logger, audit hook); undefined when none is configured. */
  audit?: TokenEventSink;
  metrics?: DockgateMetrics;
  onError: (err: unknown, req?: Request) => void;
  /** `Basic realm="…"`, built once from `basicRealm`. */
  basicChallenge: string;
  /** The `realm` option, validated; undefined when the realm is taken from each request. */
  realm?: string;
  tokenPath: string;
  jwksPath: string;
  revokePath: string;
  maxBodyBytes: number;
}

const denyAll: Authorizer = () => [];

function defaultOnError(err: unknown): void {
  // Only name, code and message: hook errors could otherwise drag request data into the log.
  const e = err as { name?: string; code?: string; message?: string };
  console.error(`[dockgate] token service error: ${e?.name ?? 'Error'}${e?.code ? ` (${e.code})` : ''}: ${e?.message ?? String(err)}`);
}

/** A value that goes into a response header: no control or non-Latin-1 characters. */
function headerSafe(value: unknown, name: string): string {
  const text = nonEmptyString(value, name);
  if (!isQuotable(text)) throw new TypeError(`"${name}" must not hold control or non-Latin-1 characters (it is sent in WWW-Authenticate)`);
  return text;
}

function seconds(value: unknown, name: string, min: number): number {
  return integerOption(value, name, min, undefined, 'seconds');
}

function routePath(value: unknown, name: string): string {
  const path = nonEmptyString(value, name);
  if (!/^\/[A-Za-z0-9._~/-]*$/.test(path)) throw new TypeError(`"${name}" must be a plain path starting with "/"`);
  return path;
}

const hook = optionalFunction;

/**
 * Applies defaults and validates every option once, at construction: a misconfiguration is a
 * TypeError naming the option (or a KeyConfigurationError for an unusable key), never a
 * per-request failure.
 */
export function resolveTokenOptions(options: TokenOptions): ResolvedTokenOptions {
  if (options === null || typeof options !== 'object') throw new TypeError('tokenRouter options must be an object');
  const issuer = nonEmptyString(options.issuer, 'issuer');
  const serviceList = typeof options.service === 'string' ? [options.service] : options.service;
  if (!Array.isArray(serviceList) || serviceList.length === 0) throw new TypeError('"service" must be a non-empty string or a non-empty list of them');
  for (const s of serviceList) nonEmptyString(s, 'service');
  if (options.keys === undefined || options.keys === null) throw new TypeError('"keys" is required: at least one signing key');
  const keyInputs = (Array.isArray(options.keys) ? options.keys : [options.keys]) as SigningKeyInput[];
  const keyRing = loadKeyRing(keyInputs);
  const authenticate = hook(options.authenticate, 'authenticate');
  const allowAnonymous = booleanOption(options.allowAnonymous ?? false, 'allowAnonymous');
  if (!authenticate && !allowAnonymous) throw new TypeError('"authenticate" is required unless "allowAnonymous" is true');
  const refresh = options.refreshTokens ?? {};
  const idleTtl = seconds(refresh.idleTtl ?? 30 * 86400, 'refreshTokens.idleTtl', 60);
  const absoluteTtl = seconds(refresh.absoluteTtl ?? 90 * 86400, 'refreshTokens.absoluteTtl', 60);
  if (idleTtl > absoluteTtl) throw new TypeError('"refreshTokens.idleTtl" must not exceed "refreshTokens.absoluteTtl"');
  const maxPerSubject = refresh.maxPerSubject ?? 100;
  if (!Number.isInteger(maxPerSubject) || maxPerSubject < 1) throw new TypeError('"refreshTokens.maxPerSubject" must be a positive integer');
  const store = refresh.store ?? new MemoryRefreshTokenStore();
  for (const method of ['save', 'use', 'revoke', 'revokeSubject'] as const) {
    if (typeof store[method] !== 'function') throw new TypeError(`"refreshTokens.store" must implement ${method}()`);
  }
  const maxBodyBytes = integerOption(options.maxBodyBytes ?? 16384, 'maxBodyBytes', 1024);
  const logger = resolveLogger(options.logger, 'tokenRouter');
  const metrics = resolveMetrics(options.metrics, 'tokenRouter');
  const resolved: ResolvedTokenOptions = {
    issuer,
    services: new Set(serviceList),
    keyRing,
    authorize: hook(options.authorize, 'authorize') ?? denyAll,
    allowAnonymous,
    accessTokenTtl: seconds(options.accessTokenTtl ?? 300, 'accessTokenTtl', 60),
    refresh: { store, idleTtlMs: idleTtl * 1000, absoluteTtlMs: absoluteTtl * 1000, bindClientId: refresh.bindClientId ?? false, maxPerSubject },
    onError: hook(options.onError, 'onError') ?? (logger ? loggingOnError(logger) : defaultOnError),
    basicChallenge: `Basic realm=${quotedString(headerSafe(options.basicRealm ?? issuer, 'basicRealm'))}`,
    tokenPath: routePath(options.tokenPath ?? '/token', 'tokenPath'),
    jwksPath: routePath(options.jwksPath ?? '/jwks', 'jwksPath'),
    revokePath: routePath(options.revokePath ?? '/revoke', 'revokePath'),
    maxBodyBytes,
  };
  if (options.realm !== undefined) resolved.realm = headerSafe(httpUrl(options.realm, 'realm').href, 'realm');
  if (authenticate) resolved.authenticate = authenticate;
  if (metrics) resolved.metrics = metrics;
  if (options.throttle !== false) {
    resolved.throttle = new LoginThrottle(options.throttle ?? {}, (err) => resolved.onError(err), () => metrics?.backendFailures.inc({ backend: 'throttle_store' }));
  }
  const audit = hook(options.audit, 'audit');
  const sink = tokenEventSink({ ...(audit ? { audit } : {}), ...(logger ? { logger } : {}), ...(metrics ? { metrics } : {}), onError: (err) => resolved.onError(err) });
  if (sink) resolved.audit = sink;
  return resolved;
}
