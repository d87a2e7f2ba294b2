import express, { type Express, type Request, type Router } from 'express';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { aclAuthorizer, bearerGuard, ownNamespaceAcl, tokenRouter, type AclRule, type BearerGuard, type TokenRouter } from 'dockgate';
import { adminPredicate, callerFromBearer, engineRouter, tenancyPolicy, writeEngineAuthError, type ContainerRuntime, type EngineCaller } from 'dockgate/engine';
import { dockerRuntime } from 'dockgate/engine/docker';
import { processRuntime } from 'dockgate/engine/process';
import { sandboxRuntime } from 'dockgate/engine/sandbox';
import {
  redisRefreshTokenStore, redisThrottleStore, type RedisConnectionOptions, type RedisRefreshTokenStore, type RedisThrottleStore,
} from 'dockgate/redis';
import { demoAuthenticator } from './authenticate.js';
import type { KeyFiles } from './dev-key.js';
import type { DemoOptions } from './options.js';
import { registryRoutes } from './registry-routes.js';
import { requestLog } from './request-log.js';

/**
 * Who calls the engine through the Unix socket: the local administrator, as on dockerd's socket
 * (the socket file's mode decides who may connect). No subject: what it creates belongs to no
 * tenant.
 */
export const LOCAL_ADMINISTRATOR: EngineCaller = Object.freeze({ claims: Object.freeze({}), access: Object.freeze([]) });

/** The demo's default rules: own namespace and library pulls, plus the engine API for any signed-in user (a tenant, see --engine-admins). */
export function defaultAcl(): AclRule[] {
  return [
    ...ownNamespaceAcl(),
    { comment: 'signed-in users drive the engine API over TCP', match: { account: '/.+/', type: 'engine', name: 'api' }, actions: ['read', 'write'] },
  ];
}

export interface DemoApp {
  /** Token service, /v2/ routes and the bearer-protected engine under /engine. */
  app: Express;
  /** The engine API alone, for the Unix socket (protected by the socket file's permissions). */
  engineApp: Express;
  tokens: TokenRouter;
  realm: string;
  runtime: ContainerRuntime;
  /** The Redis refresh-token store, when --redis or --redis-cluster was given: closed on shutdown. */
  redisStore?: RedisRefreshTokenStore;
  /** The Redis login-throttle store, with the refresh-token store: closed on shutdown. */
  throttleStore?: RedisThrottleStore;
  /** The registry `/metrics` serves: dockgate's metrics and Node's process metrics. */
  registry: Registry;
  /** The parts the TCP app is composed of, for {@link composeDemoApp}. */
  parts: DemoParts;
}

/** What the demo's TCP app is made of. */
export interface DemoParts {
  tokens: TokenRouter;
  guard: BearerGuard;
  engine: Router;
  logger: Logger;
  registry: Registry;
}

/** What the host gives the demo to watch it by. */
export interface DemoObservability {
  /** Where the lines go. */
  logger: Logger;
  /** Where the metrics go. Defaults to a new Registry with Node's default process metrics. */
  registry?: Registry;
}

/**
 * The TCP app, in the order a host should copy: request ids first, `/metrics`, then the registry
 * routes (the busiest: a pull makes dozens of requests) so they do not pass through the token
 * and engine routers first, then the token service, then the engine API, which answers every
 * path under its mount point.
 */
export function composeDemoApp({ tokens, guard, engine, logger, registry }: DemoParts): Express {
  const app = express();
  // No X-Powered-By: a header on every answer that only tells a scanner what runs here.
  app.disable('x-powered-by');
  app.use(requestLog(logger));
  app.get('/metrics', async (_req, res) => {
    // Unprotected, as Prometheus scrapes usually are: serve it on an internal address only.
    res.setHeader('Content-Type', registry.contentType);
    res.end(await registry.metrics());
  });
  app.use('/v2', registryRoutes(guard, new Map([
    ['alice/hello', ['1.0', 'latest']],
    ['bob/tools', ['2024.1']],
    ['library/busybox', ['latest']],
  ])));
  app.use(tokens);
  // Over TCP the engine API is for token holders: reads need engine:api:read, the rest write.
  // The engine's clients read {"message"} errors, not the registry's {"errors":[…]}.
  const engineScope = (req: Request) => `engine:api:${req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write'}`;
  app.use('/engine', guard(engineScope, { writeError: writeEngineAuthError }), engine);
  return app;
}

/** Builds the demo from dockgate's public exports, as a host application would. */
export function createDemoApp(options: DemoOptions, key: KeyFiles, publicUrl: string, observe: DemoObservability): DemoApp {
  const { logger } = observe;
  const registry = observe.registry ?? new Registry();
  if (!observe.registry) collectDefaultMetrics({ register: registry });
  // One metrics option for all three routers: they share one set of series on this registry.
  const metrics = { registry };
  const realm = `${publicUrl}/token`;
  // Both stores on the same Redis (each opens its own fail-fast connection): every instance
  // started against it shares refresh tokens and failed-login counts.
  const redis: RedisConnectionOptions | undefined = options.redis ? { url: options.redis } : options.redisCluster ? { cluster: options.redisCluster } : undefined;
  const redisStore = redis ? redisRefreshTokenStore(redis) : undefined;
  const throttleStore = redis ? redisThrottleStore(redis) : undefined;
  const tokens = tokenRouter({
    issuer: options.issuer,
    service: options.service,
    keys: { privateKey: key.privateKey, certificateChain: key.certificate },
    authenticate: demoAuthenticator(options),
    authorize: aclAuthorizer(options.acl ? { file: options.acl } : defaultAcl()),
    ...(redisStore ? { refreshTokens: { store: redisStore } } : {}),
    ...(throttleStore ? { throttle: { store: throttleStore } } : {}),
    logger: logger.child({ component: 'token' }),
    metrics,
  });
  const guard = bearerGuard({ realm, keys: tokens, metrics });
  const runtime = options.runtime === 'docker'
    ? dockerRuntime({ socketPath: options.dockerSocket })
    : options.runtime === 'sandbox'
    ? sandboxRuntime({ stateDir: join(options.stateDir, 'engine'), insecureRegistries: options.insecureRegistries, ...(options.usernsSize !== undefined ? { userns: { size: options.usernsSize } } : {}) })
    : processRuntime({
      // Commands of these images run on this host, through busybox (busybox-static) when there is one.
      images: {
        'busybox:*': { program: '/bin/busybox' },
        'alpine:*': { program: '/bin/busybox' },
      },
    });
  const range = { min: options.apiRange.min, max: options.apiRange.max };
  // Over TCP every signed-in account is a tenant: its own containers only, nothing that reaches
  // the host, images under its own namespace. --engine-admins names the accounts that administer;
  // the socket's requests are the local administrator's.
  const viaSocket = new WeakSet<Request>();
  const policy = tenancyPolicy({
    admin: adminPredicate({ subjects: options.engineAdmins, test: (caller) => caller === LOCAL_ADMINISTRATOR }),
  });
  const engine = engineRouter(runtime, range, {
    metrics, logger, policy,
    caller: (req) => (viaSocket.has(req) ? LOCAL_ADMINISTRATOR : callerFromBearer(req)),
  });

  const engineApp = express();
  engineApp.disable('x-powered-by');
  engineApp.use(requestLog(logger), (req, _res, next) => {
    viaSocket.add(req);
    next();
  }, engine);
  const parts: DemoParts = { tokens, guard, engine, logger, registry };
  const app = composeDemoApp(parts);
  return {
    app, engineApp, tokens, realm, runtime, registry, parts,
    ...(redisStore ? { redisStore } : {}), ...(throttleStore ? { throttleStore } : {}),
  };
}
