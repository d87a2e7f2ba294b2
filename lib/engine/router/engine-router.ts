import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { ContainerRuntime } from '../../engine-api/runtime-types.js';
import { resolveVersionRange, type VersionRangeInput } from '../../engine-api/version-range.js';
import { EngineError } from '../../engine-api/engine-error.js';
import { writeEngineError } from '../errors/write-engine-error.js';
import { resolveEngineOptions, type EngineRouterOptions } from './options.js';
import { logContainerEvents } from './container-log.js';
import { engineLocals, type EngineContext } from './http/context.js';
import { engineHeaders } from './http/engine-headers.js';
import { countRunningContainers, engineRequestMetrics } from './http/engine-metrics.js';
import { registerSystemRoutes } from './system/system-routes.js';
import { registerInfoRoute } from './system/info-route.js';
import { registerEventsRoute } from './system/events-route.js';
import { registerAuthRoute } from './system/auth-route.js';
import { registerDiskUsageRoute } from './system/disk-usage-route.js';
import { registerContainerRoutes } from './container/container-routes.js';
import { registerAttachRoute } from './container/attach-route.js';
import { registerStopKillRoutes } from './container/stop-kill-routes.js';
import { registerContainerOpsRoutes } from './container/container-ops-routes.js';
import { registerArchiveRoutes } from './container/archive-routes.js';
import { registerExportRoute } from './container/export-route.js';
import { registerExecRoutes } from './exec/exec-routes.js';
import { registerImageRoutes } from './image/image-routes.js';
import { registerImageStoreRoutes } from './image/image-store-routes.js';
import { registerPushRoute } from './image/push-route.js';
import { registerBuildRoutes } from './build/build-routes.js';
import { registerNetworkRoutes } from './network/network-routes.js';
import { registerVolumeRoutes } from './volume/volume-routes.js';
import { registerSwarmRoutes } from './swarm/swarm-routes.js';
import { registerPluginRoutes } from './plugin/plugin-routes.js';
import { registerUnsupportedRoutes } from './system/unsupported-routes.js';

/**
 * dockerd's `versionMatcher` (`/v{version:[0-9.]+}`): digits and dots only, so `/vabc/…` or
 * `/1.41/…` match no route and get 404 `page not found`.
 */
const VERSION_PREFIX = /^\/v([0-9.]+)(?=\/|$)/;

const RUNTIME_METHODS = ['create', 'start', 'wait', 'logs', 'attach', 'inspect', 'list', 'remove', 'events'] as const;

/**
 * The Docker Engine API as an Express router: `/_ping`, `/version`, `/events`, the
 * container routes and the image pull, served at every version of `versionRange` (path prefix `/v1.28/…`, or none
 * for the newest) in front of a {@link ContainerRuntime}. It answers every path under its mount
 * point (unknown ones with 404 `page not found`, as dockerd), so mount it last or on its own
 * server. HTTP upgrades (`docker run`'s attach) also need `handleEngineUpgrades(server, app)`,
 * which `listenEngine` does for you.
 *
 * @param versionRange - Defaults to API 1.12–1.28 (`{ release: '17.04' }`).
 * @throws TypeError at construction for a bad runtime, range or option.
 * @example
 * const app = express();
 * app.use(engineRouter(processRuntime({ images: { busybox: { program: '/bin/busybox' } } }), { release: '17.04' }));
 * await listenEngine(app, { socket: '/run/dockgate.sock' });
 */
export function engineRouter(runtime: ContainerRuntime, versionRange?: VersionRangeInput, options?: EngineRouterOptions): Router {
  if (typeof runtime !== 'object' || runtime === null) throw new TypeError('engineRouter "runtime" must be a ContainerRuntime');
  for (const method of RUNTIME_METHODS) {
    if (typeof runtime[method] !== 'function') throw new TypeError(`engineRouter "runtime" lacks the ContainerRuntime method ${method}()`);
  }
  const ctx: EngineContext = { runtime, range: resolveVersionRange(versionRange), settings: resolveEngineOptions(options) };

  const api = express.Router();
  registerSystemRoutes(api, ctx);
  registerInfoRoute(api, ctx);
  registerContainerRoutes(api, ctx);
  registerAttachRoute(api, ctx);
  registerEventsRoute(api, ctx);
  registerStopKillRoutes(api, ctx);
  registerExecRoutes(api, ctx);
  registerContainerOpsRoutes(api, ctx);
  registerArchiveRoutes(api, ctx);
  registerExportRoute(api, ctx);
  registerUnsupportedRoutes(api, ctx);
  registerImageRoutes(api, ctx);
  registerAuthRoute(api, ctx);
  registerImageStoreRoutes(api, ctx);
  registerPushRoute(api, ctx);
  registerBuildRoutes(api, ctx);
  registerNetworkRoutes(api, ctx);
  registerVolumeRoutes(api, ctx);
  registerPluginRoutes(api, ctx);
  registerDiskUsageRoute(api, ctx);
  registerSwarmRoutes(api, ctx);

  const router = express.Router();
  const { metrics, logger } = ctx.settings;
  if (metrics) {
    router.use(engineRequestMetrics(metrics));
    countRunningContainers(metrics, runtime);
  }
  if (logger) logContainerEvents(runtime, logger);
  router.use(engineHeaders(ctx));
  router.use(
    VERSION_PREFIX,
    (req: Request, res: Response, next: NextFunction) => {
      engineLocals(res).requested = (req.params as Record<string, string>)[0];
      next();
    },
    api,
  );
  router.use((req: Request, res: Response, next: NextFunction) => {
    // A versioned path that matched no route must not be retried as an unversioned one.
    const versioned = VERSION_PREFIX.exec(req.path);
    if (versioned) {
      // dockerd's versioned catch-all knows the version, so below 1.24 this 404 is plain text too.
      writeEngineError(res, EngineError.notFound('page not found'), versioned[1]);
      return;
    }
    engineLocals(res).requested = undefined;
    next();
  }, api);
  router.use(pageNotFound);
  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    // Express's router marks its own request errors with a 4xx `status` (http-errors style):
    // a path parameter with a broken percent-escape (`/containers/%ZZ/json`) is the client's
    // input, answered 400 like dockerd's Go server does, not a 500.
    const status = (error as { status?: unknown } | null)?.status;
    if (!(error instanceof EngineError) && typeof status === 'number' && status >= 400 && status < 500) {
      writeEngineError(res, EngineError.fromStatus(status, (error as Error).message), engineLocals(res).requested);
      return;
    }
    ctx.settings.onError?.(error, req);
    writeEngineError(res, error instanceof EngineError ? error : EngineError.system('internal server error'));
  });
  return router;
}

/** dockerd answers unknown paths and wrong methods alike with 404 `page not found`. */
function pageNotFound(_req: Request, res: Response): void {
  writeEngineError(res, EngineError.notFound('page not found'));
}
