import type { Request } from 'express';
import { resolveLogger, type DockgateLogger } from '../../logging/index.js';
import { resolveMetrics, type DockgateMetrics, type MetricsOptions } from '../../metrics/index.js';
import type { EnginePolicy } from '../policy/policy-types.js';
import type { CallerResolver } from '../policy/engine-caller.js';
import { optionChecks } from '../../options/option-checks.js';

/** Options of {@link engineRouter}; each is validated once, at construction. */
export interface EngineRouterOptions {
  /** Engine version reported by `/version` (`Version`) and in the `Server` header. Defaults to `"dockgate"`'s own version, `0.1.0`. */
  engineVersion?: string;
  /** `Ostype` header and `Os` of `/version`. Defaults to `"linux"` (Docker's name for the host OS; `"windows"` on win32). */
  os?: string;
  /** `Docker-Experimental` header and `Experimental` of `/version`. Defaults to `false`. */
  experimental?: boolean;
  /** Largest `POST /containers/create` body accepted, in bytes. Defaults to 1 MiB. */
  maxBodyBytes?: number;
  /** Receives errors that are answered as a bare 500 (never sent to the client). Defaults to none. */
  onError?: (error: unknown, req: Request) => void;
  /**
   * Prometheus metrics (prom-client) `{ registry, prefix }`, the same option as tokenRouter's:
   * requests by route pattern, version and status, their duration, and the running containers
   * of a local runtime. Defaults to none.
   */
  metrics?: MetricsOptions;
  /** A pino-compatible logger: one line per container lifecycle event of a local runtime. Defaults to none. */
  logger?: DockgateLogger;
  /**
   * The checkpoint in front of every route: asked with the action's stable name (see
   * `ENGINE_ACTIONS`), the caller, the resolved target and, for creates, the parsed body; it
   * allows, refuses (403 `{"message"}`) or hides the target (404). Compose the built-ins
   * (`tenancyPolicy`, `ownershipPolicy`, `tenantPolicy`, `imageNamePolicy`, `ownerCapsPolicy`)
   * with `composePolicies`. Defaults to none: every caller may do everything, as on dockerd's socket.
   */
  policy?: EnginePolicy;
  /**
   * Who calls, for the policy. Defaults to the verified bearer token of `requireBearer` or
   * `bearerGuard` (`req.bearer`), and an anonymous caller without one.
   */
  caller?: CallerResolver;
}

/** Resolved options. */
export interface EngineSettings {
  engineVersion: string;
  os: string;
  experimental: boolean;
  maxBodyBytes: number;
  onError?: (error: unknown, req: Request) => void;
  serverHeader: string;
  metrics?: DockgateMetrics;
  logger?: DockgateLogger;
  policy?: EnginePolicy;
  caller?: CallerResolver;
}

export const DEFAULT_ENGINE_VERSION = '0.1.0';

/** Applies defaults and validates; a bad option throws a TypeError naming it. */
const check = optionChecks('engineRouter');

export function resolveEngineOptions(options: EngineRouterOptions = {}): EngineSettings {
  if (typeof options !== 'object' || options === null) throw new TypeError('engineRouter options must be an object');
  const engineVersion = options.engineVersion ?? DEFAULT_ENGINE_VERSION;
  if (typeof engineVersion !== 'string' || !/^[\w.+~-]{1,64}$/.test(engineVersion)) {
    throw new TypeError('engineRouter option "engineVersion" must be a short version string such as "0.1.0"');
  }
  const os = options.os ?? (process.platform === 'win32' ? 'windows' : 'linux');
  if (typeof os !== 'string' || !/^[a-z0-9]{1,32}$/.test(os)) throw new TypeError('engineRouter option "os" must be a lower-case OS name such as "linux"');
  const experimental = check.booleanOption(options.experimental ?? false, 'experimental');
  const maxBodyBytes = check.integerOption(options.maxBodyBytes ?? 1024 * 1024, 'maxBodyBytes', 1024);
  check.optionalFunction(options.onError, 'onError');
  check.optionalFunction(options.policy, 'policy');
  check.optionalFunction(options.caller, 'caller');
  const metrics = resolveMetrics(options.metrics, 'engineRouter');
  const logger = resolveLogger(options.logger, 'engineRouter');
  return {
    ...(metrics ? { metrics } : {}),
    ...(logger ? { logger } : {}),
    engineVersion,
    os,
    experimental,
    maxBodyBytes,
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.caller ? { caller: options.caller } : {}),
    serverHeader: `Dockgate/${engineVersion} (${os})`,
  };
}
