import type { Router } from 'express';
import { engineRoute, routeExecSpec, type EngineContext } from '../http/context.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { readJsonBody } from '../http/read-json-body.js';
import { detachKeysOf, hijack, isUpgradeEvent, splice, wantsUpgrade } from '../http/hijack.js';
import { queryString } from '../http/query.js';
import { streamContentType } from '../http/output-response.js';
import { parseExecCreate, parseExecStart } from './exec-body.js';

/**
 * The exec routes: create, start (detached, or attached over the same hijacked connection as
 * attach, stdin included), inspect and resize. Each answers 501 `exec is not supported by the
 * <name> runtime` when the runtime lacks its operation.
 */
export function registerExecRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  const unsupported = (): EngineError => EngineError.unsupported('exec', runtime.name);

  api.post(
    '/containers/:id/exec',
    engineRoute(ctx, 'exec.create', async (req, res, version) => {
      if (!runtime.createExec) {
        req.resume();
        throw unsupported();
      }
      const { id } = await runtime.createExec(req.params.id as string, routeExecSpec(res), version);
      writeEngineJson(res.status(201), { Id: id });
    }, { exec: parseExecCreate }),
  );

  api.post(
    '/exec/:id/start',
    engineRoute(ctx, 'exec.start', async (req, res, version) => {
      if (!runtime.startExec) {
        req.resume();
        throw unsupported();
      }
      const start = parseExecStart(await readJsonBody(req, ctx.settings.maxBodyBytes), version);
      const session = await runtime.startExec(req.params.id as string, start);
      if (!session) {
        // dockerd answers a detached start with an empty 200 once the command runs.
        res.status(200).end();
        return;
      }
      const upgrade = wantsUpgrade(req);
      // dockerd labels only the upgraded stream (multiplexed from 1.42); a plain 200 is raw-stream.
      const contentType = (upgrade ? streamContentType(session, version) : undefined) ?? 'application/vnd.docker.raw-stream';
      const socket = hijack(req, res, upgrade, contentType);
      const duplex = isUpgradeEvent(req);
      // Without an upgraded connection nothing can reach the command's stdin: close it, so a
      // command reading stdin sees EOF instead of waiting forever (the exec's stdin is its own).
      if (!duplex) session.stdin?.end();
      // dockerd ends an exec's attach at the detach keys with its attach error, in the stream.
      splice(session, socket, duplex, detachKeysOf(session, undefined), 'exec attach failed: error on attach stdin: read escape sequence\r\n');
    }),
  );

  api.get(
    '/exec/:id/json',
    engineRoute(ctx, 'exec.inspect', async (req, res, version) => {
      if (!runtime.inspectExec) throw unsupported();
      writeEngineJson(res.status(200), await runtime.inspectExec(req.params.id as string, version));
    }),
  );

  api.post(
    '/exec/:id/resize',
    engineRoute(ctx, 'exec.resize', async (req, res) => {
      if (!runtime.resizeExec) throw unsupported();
      req.resume();
      const height = dimension(queryString(req.query.h), 'h');
      const width = dimension(queryString(req.query.w), 'w');
      await runtime.resizeExec(req.params.id as string, { height, width });
      res.status(200).end();
    }),
  );
}

/** dockerd reads `h`/`w` with strconv.Atoi and answers a bad one 400; sizes are unsigned. */
function dimension(value: string | undefined, name: string): number {
  if (value === undefined || !/^\d{1,5}$/.test(value)) throw EngineError.invalidParameter(`invalid ${name} value ${JSON.stringify(value ?? '')}: expected a number from 0 to 65535`);
  const n = Number(value);
  if (n > 65535) throw EngineError.invalidParameter(`invalid ${name} value ${value}: expected a number from 0 to 65535`);
  return n;
}

