import type { Counter, Histogram, Registry } from 'prom-client';
import { promClient } from './prom-client.js';

/** `result` of a bearer check: `ok`, or why the request was refused. */
export type BearerResult = 'ok' | 'missing' | 'invalid_token' | 'insufficient_scope' | 'name_invalid' | 'unavailable';

/** A backend whose failure is counted: the refresh-token store, the throttle store, the authenticator. */
export type Backend = 'refresh_store' | 'throttle_store' | 'authenticator';

/** Something whose running containers are counted when the registry is scraped. */
export interface RunningContainers {
  readonly name: string;
  running(): Promise<number>;
}

/**
 * dockgate's metrics on one registry. Labels are all bounded: grant types, configured service
 * names, OAuth error codes, route patterns, API versions of the configured range, status codes.
 * Never a user, repository or token.
 */
export interface DockgateMetrics {
  tokensIssued: Counter<'grant_type' | 'service'>;
  tokenRefusals: Counter<'error'>;
  loginsThrottled: Counter;
  refreshTokens: Counter<'event'>;
  backendFailures: Counter<'backend'>;
  grantDuration: Histogram<'grant_type' | 'result'>;
  bearerChecks: Counter<'result'>;
  /**
   * Bearer checks counted since the last scrape, by result: a plain increment on the path of
   * every protected request (prom-client hashes the label set on each `inc`); the counter adds
   * them up when it is collected.
   */
  bearerResults: Record<BearerResult, number>;
  engineRequests: Counter<'route' | 'version' | 'status'>;
  engineDuration: Histogram<'route'>;
  /** Runtimes whose running containers the gauge reports. */
  runtimes: Set<RunningContainers>;
}

const byRegistry = new WeakMap<Registry, Map<string, DockgateMetrics>>();

/** Seconds: a grant is a few hundred µs without bcrypt, up to a directory's timeout with one. */
const GRANT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const ENGINE_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120];

/**
 * The metrics of `prefix` on `registry`, created and registered on first use and shared after:
 * a token router, a bearer guard and an engine router built on one registry count into the same
 * series (prom-client throws on a second registration of a name).
 */
export function dockgateMetrics(registry: Registry, prefix: string): DockgateMetrics {
  let forRegistry = byRegistry.get(registry);
  if (!forRegistry) byRegistry.set(registry, (forRegistry = new Map()));
  const known = forRegistry.get(prefix);
  if (known) return known;
  const { Counter, Gauge, Histogram } = promClient();
  const registers = [registry];
  const runtimes = new Set<RunningContainers>();
  const bearerResults: Record<BearerResult, number> = { ok: 0, missing: 0, invalid_token: 0, insufficient_scope: 0, name_invalid: 0, unavailable: 0 };
  const metrics: DockgateMetrics = {
    tokensIssued: new Counter({ name: `${prefix}tokens_issued_total`, help: 'Access tokens issued, by grant type and service.', labelNames: ['grant_type', 'service'], registers }),
    tokenRefusals: new Counter({ name: `${prefix}token_refusals_total`, help: 'Token and revocation requests refused, by OAuth error code (RFC 6749 §5.2).', labelNames: ['error'], registers }),
    loginsThrottled: new Counter({ name: `${prefix}logins_throttled_total`, help: 'Password logins refused by the brute-force throttle (429 slow_down).', registers }),
    refreshTokens: new Counter({ name: `${prefix}refresh_tokens_total`, help: 'Refresh tokens created, used (redeemed) and revoked.', labelNames: ['event'], registers }),
    backendFailures: new Counter({ name: `${prefix}backend_failures_total`, help: 'Failed calls to the refresh-token store, the throttle store or the authenticator.', labelNames: ['backend'], registers }),
    grantDuration: new Histogram({ name: `${prefix}grant_duration_seconds`, help: 'Time to answer a token request, by grant type and result.', labelNames: ['grant_type', 'result'], buckets: GRANT_BUCKETS, registers }),
    bearerChecks: new Counter({
      name: `${prefix}bearer_checks_total`, help: 'Bearer token checks of protected routes, by result.', labelNames: ['result'], registers,
      collect() {
        for (const result of Object.keys(bearerResults) as BearerResult[]) {
          const count = bearerResults[result];
          if (count === 0) continue;
          bearerResults[result] = 0;
          this.inc({ result }, count);
        }
      },
    }),
    bearerResults,
    engineRequests: new Counter({ name: `${prefix}engine_requests_total`, help: 'Engine API requests, by route pattern, served API version and status.', labelNames: ['route', 'version', 'status'], registers }),
    engineDuration: new Histogram({ name: `${prefix}engine_request_duration_seconds`, help: 'Engine API request duration (streams: until they end), by route pattern.', labelNames: ['route'], buckets: ENGINE_BUCKETS, registers }),
    runtimes,
  };
  new Gauge({
    name: `${prefix}running_containers`,
    help: 'Running containers of the local runtimes (sandbox, process), read when scraped.',
    labelNames: ['runtime'],
    registers,
    async collect() {
      this.reset();
      const counts = new Map<string, number>();
      for (const runtime of runtimes) counts.set(runtime.name, (counts.get(runtime.name) ?? 0) + await runtime.running());
      for (const [runtime, count] of counts) this.set({ runtime }, count);
    },
  });
  forRegistry.set(prefix, metrics);
  return metrics;
}
