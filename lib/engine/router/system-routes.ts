import { release } from 'node:os';
import type { Router } from 'express';
import { engineRoute, type EngineContext } from './context.js';
import { writeEngineJson } from '../errors/write-engine-error.js';
import { apiVersionAtLeast } from '../../engine-api/api-version.js';

/** Go's GOARCH names for Node's `process.arch`. */
const GOARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', s390x: 's390x', ppc64: 'ppc64le', riscv64: 'riscv64' };

/**
 * `/_ping` (HEAD and GET, what clients negotiate with), `/version`, and dockerd's catch-all
 * `OPTIONS` answering 200.
 */
export function registerSystemRoutes(api: Router, ctx: EngineContext): void {
  const ping = engineRoute(ctx, 'system.ping', (req, res) => {
    res.setHeader('Cache-Control', 'no-cache, no-store, must-revalidate');
    res.setHeader('Pragma', 'no-cache');
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    if (req.method === 'HEAD') {
      // dockerd answers HEAD with an explicit zero length and no body (system_routes.go pingHandler).
      res.setHeader('Content-Length', '0');
      res.status(200).end();
      return;
    }
    res.status(200).end('OK');
  });
  api.head('/_ping', ping);
  api.get('/_ping', ping);

  // Everything /version reports is fixed for the router's life: built once, not per request.
  const { engineVersion, os, experimental } = ctx.settings;
  const arch = GOARCH[process.arch] ?? process.arch;
  const base = {
    Version: engineVersion,
    ApiVersion: ctx.range.max,
    MinAPIVersion: ctx.range.min,
    GitCommit: '',
    // GoVersion is left out: dockgate is not built with Go. The Node.js version it runs on is
    // named as such in the Engine component's Details (API >= 1.35).
    Os: os,
    Arch: arch,
    KernelVersion: release(),
    ...(experimental ? { Experimental: true } : {}),
    BuildTime: '',
  };
  // Platform and Components arrived in API 1.35.
  const withComponents = {
    Platform: { Name: 'dockgate' },
    Components: [
      {
        Name: 'Engine',
        Version: engineVersion,
        Details: {
          ApiVersion: ctx.range.max,
          MinAPIVersion: ctx.range.min,
          Os: os,
          Arch: arch,
          KernelVersion: release(),
          Experimental: String(experimental),
          NodeVersion: process.version,
        },
      },
    ],
    ...base,
  };
  api.get(
    '/version',
    engineRoute(ctx, 'system.version', (_req, res, version) => {
      writeEngineJson(res.status(200), apiVersionAtLeast(version, '1.35') ? withComponents : base);
    }),
  );

  api.options(
    /.*/,
    engineRoute(ctx, 'system.options', (_req, res) => {
      res.status(200).end();
    }),
  );
}
