import { statSync } from 'node:fs';
import { release } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Router } from 'express';
import { engineRoute, type EngineContext } from '../http/context.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { apiVersionAtLeast } from '../../../engine-api/api-version.js';

/** The language runtime dockgate runs on, written as Go writes its own (`go1.19.8`): `node20.19.0`. */
const RUNTIME_VERSION = `node${process.versions.node}`;

/**
 * When this module was built (its compiled file's time), in dockerd's BuildTime form (RFC 3339
 * with nanoseconds and a numeric zone): the same value on every answer, as a release's is.
 */
const BUILD_TIME = buildTime();

function buildTime(): string {
  let when: Date;
  try {
    when = statSync(fileURLToPath(import.meta.url)).mtime;
  } catch {
    return '';
  }
  return `${when.toISOString().slice(0, 19)}.${String(when.getUTCMilliseconds()).padStart(3, '0')}000000+00:00`;
}

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
    // Every field dockerd gives, since SDK suites check for them (docker-py's test_version
    // asserts GoVersion is there). dockgate is not built with Go: GoVersion names the language
    // runtime it runs on in Go's own form ("go1.19.8" there, "node20.19.0" here), and the Engine
    // component's Details name it again as NodeVersion (API >= 1.35).
    GoVersion: RUNTIME_VERSION,
    Os: os,
    Arch: arch,
    KernelVersion: release(),
    ...(experimental ? { Experimental: true } : {}),
    BuildTime: BUILD_TIME,
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
          GitCommit: '',
          GoVersion: RUNTIME_VERSION,
          Os: os,
          Arch: arch,
          KernelVersion: release(),
          BuildTime: BUILD_TIME,
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
