import express, { type Express, type Request } from 'express';
import { join } from 'node:path';
import {
  aclAuthorizer, bearerGuard, dockerRuntime, engineRouter, ownNamespaceAcl, processRuntime, sandboxRuntime,
  redisRefreshTokenStore, redisThrottleStore, tokenRouter, writeEngineAuthError, type AclRule, type ContainerRuntime, type RedisConnectionOptions,
  type RedisRefreshTokenStore, type RedisThrottleStore, type TokenRouter,
} from 'dockgate';
import { demoAuthenticator } from './authenticate.js';
import type { KeyFiles } from './dev-key.js';
import type { DemoOptions } from './options.js';
import { registryRoutes } from './registry-routes.js';

/** The demo's default rules: own namespace and library pulls, plus the engine API for any signed-in user. */
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
}

/** Builds the demo from dockgate's public exports, as a host application would. */
export function createDemoApp(options: DemoOptions, key: KeyFiles, publicUrl: string): DemoApp {
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
  });
  const guard = bearerGuard({ realm, keys: tokens });
  const runtime = options.runtime === 'docker'
    ? dockerRuntime({ socketPath: options.dockerSocket })
    : options.runtime === 'sandbox'
    ? sandboxRuntime({ stateDir: join(options.stateDir, 'engine'), insecureRegistries: options.insecureRegistries })
    : processRuntime({
      // Commands of these images run on this host, through busybox (busybox-static) when there is one.
      images: {
        'busybox:*': { program: '/bin/busybox' },
        'alpine:*': { program: '/bin/busybox' },
      },
    });
  const range = { min: options.apiRange.min, max: options.apiRange.max };
  const engine = engineRouter(runtime, range);

  const engineApp = express();
  engineApp.use(engine);

  const app = express();
  app.use(tokens);
  app.use(registryRoutes(guard, new Map([
    ['alice/hello', ['1.0', 'latest']],
    ['bob/tools', ['2024.1']],
    ['library/busybox', ['latest']],
  ])));
  // Over TCP the engine API is for token holders: reads need engine:api:read, the rest write.
  // The engine's clients read {"message"} errors, not the registry's {"errors":[…]}.
  const engineScope = (req: Request) => `engine:api:${req.method === 'GET' || req.method === 'HEAD' ? 'read' : 'write'}`;
  app.use('/engine', guard(engineScope, { writeError: writeEngineAuthError }), engine);
  return { app, engineApp, tokens, realm, runtime, ...(redisStore ? { redisStore } : {}), ...(throttleStore ? { throttleStore } : {}) };
}
