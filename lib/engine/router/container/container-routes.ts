import type { Router } from 'express';
import { engineLocals, engineRoute, routeSpec, type EngineContext } from '../http/context.js';
import { ownedFilters } from '../http/checkpoint.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { decodeContainerSpec, settleContainerSpec } from './decode-spec.js';
import { withoutForeignIds } from '../http/foreign-conflict.js';
import { boolValue, parseInteger, parseTail, queryString } from '../http/query.js';
import { parseFilters, parseTimestamp } from '../../../engine-api/filters.js';
import { abortOnClose, sendOutput, streamContentType } from '../http/output-response.js';
import type { WaitCondition } from '../../../engine-api/runtime-types.js';
import { apiVersionAtLeast, apiVersionLessThan } from '../../../engine-api/api-version.js';

/** swagger's container name pattern; dockerd's message for anything else (daemon/names.go). */
const CONTAINER_NAME = /^\/?[a-zA-Z0-9][a-zA-Z0-9_.-]+$/;
const WAIT_CONDITIONS: readonly WaitCondition[] = ['not-running', 'next-exit', 'removed'];
/** Filters dockerd's `GET /containers/json` accepts (daemon/list.go). */
const LIST_FILTERS = ['ancestor', 'before', 'expose', 'exited', 'health', 'id', 'isolation', 'is-task', 'label', 'name', 'network', 'publish', 'since', 'status', 'volume'];

/** `/containers/…`: create, start, wait, logs, inspect, list, remove. */
export function registerContainerRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;

  api.post(
    '/containers/create',
    engineRoute(ctx, 'container.create', async (req, res, version) => {
      const name = queryString(req.query.name);
      if (name !== undefined && name !== '' && !CONTAINER_NAME.test(name)) {
        throw EngineError.invalidParameter(`Invalid container name (${name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed`);
      }
      // Under a policy the container records its creator, kept with its labels (and so across
      // restarts); the ownership policy has already refused a label naming someone else.
      const policy = engineLocals(res).policy;
      const spec = settleContainerSpec(routeSpec(res), {
        ...(policy?.caller.subject !== undefined ? { owner: policy.caller.subject } : {}),
        ...(policy?.withoutCapabilities ? { withoutCapabilities: policy.withoutCapabilities } : {}),
      }, runtime);
      const created = await runtime.create({ ...(name ? { name: name.replace(/^\//, '') } : {}), spec, body: spec.raw, apiVersion: version }).catch(async (error: unknown) => {
        throw await withoutForeignIds(error, runtime, engineLocals(res).policy?.onlyOwner);
      });
      writeEngineJson(res.status(201), { Id: created.id, Warnings: created.warnings.length > 0 ? created.warnings : null });
    }, { container: decodeContainerSpec }),
  );

  api.post(
    '/containers/:id/start',
    engineRoute(ctx, 'container.start', async (req, res, version) => {
      // HostConfig on start was removed in API 1.24; dockerd rejects any body longer than "null" plus slack.
      if (apiVersionAtLeast(version, '1.24') && (Number(req.headers['content-length'] ?? 0) > 7 || req.headers['transfer-encoding'] === 'chunked')) {
        throw EngineError.invalidParameter('starting container with non-empty request body was deprecated since API v1.22 and removed in v1.24');
      }
      req.resume();
      await runtime.start(req.params.id as string);
      res.status(204).end();
    }),
  );

  api.post(
    '/containers/:id/wait',
    engineRoute(ctx, 'container.wait', async (req, res, version) => {
      const condition = waitCondition(queryString(req.query.condition), version);
      const abort = abortOnClose(req, res);
      const handle = await runtime.wait(req.params.id as string, condition, abort.signal);
      if (apiVersionLessThan(version, '1.30')) {
        writeEngineJson(res.status(200), await handle.result);
        return;
      }
      // From 1.30 the Go client reads the response before it starts the container: headers go now.
      res.status(200).setHeader('Content-Type', 'application/json');
      res.flushHeaders();
      const result = await handle.result;
      res.end(`${JSON.stringify(result)}\n`);
    }),
  );

  api.get(
    '/containers/json',
    engineRoute(ctx, 'container.list', async (req, res) => {
      const rows = await runtime.list({
        all: boolValue(req.query.all),
        limit: parseInteger(queryString(req.query.limit), 'limit'),
        filters: ownedFilters(parseFilters(queryString(req.query.filters), LIST_FILTERS), engineLocals(res).policy?.onlyOwner),
      });
      writeEngineJson(res.status(200), rows);
    }),
  );

  api.get(
    '/containers/:id/json',
    engineRoute(ctx, 'container.inspect', async (req, res) => {
      writeEngineJson(res.status(200), await runtime.inspect(req.params.id as string));
    }),
  );

  api.get(
    '/containers/:id/logs',
    engineRoute(ctx, 'container.logs', async (req, res, version) => {
      const stdout = boolValue(req.query.stdout);
      const stderr = boolValue(req.query.stderr);
      if (!stdout && !stderr) throw EngineError.invalidParameter('Bad parameters: you must choose at least one stream');
      const follow = boolValue(req.query.follow);
      const abort = abortOnClose(req, res);
      const output = await runtime.logs(req.params.id as string, {
        stdout,
        stderr,
        follow,
        timestamps: boolValue(req.query.timestamps),
        tail: parseTail(queryString(req.query.tail)),
        since: parseTimestamp(queryString(req.query.since), 'since'),
        // `until` arrived in API 1.35.
        until: apiVersionAtLeast(version, '1.35') ? parseTimestamp(queryString(req.query.until), 'until') : undefined,
        signal: abort.signal,
      });
      res.status(200);
      const contentType = streamContentType(output, version);
      if (contentType) res.setHeader('Content-Type', contentType);
      if (follow) res.flushHeaders();
      await sendOutput(output, res);
    }),
  );

  api.delete(
    '/containers/:id',
    engineRoute(ctx, 'container.delete', async (req, res) => {
      // dockerd's words (with a 500 there): a container's own name is no link to remove.
      if (boolValue(req.query.link)) throw EngineError.conflict('Conflict, cannot remove the default link name of the container');
      await runtime.remove(req.params.id as string, { force: boolValue(req.query.force), volumes: boolValue(req.query.v) });
      res.status(204).end();
    }),
  );

  // The legacy link route (`docker rm --link PARENT/ALIAS`, docker-py's remove_container(link=True)).
  api.delete(
    '/containers/:id/:alias',
    engineRoute(ctx, 'container.delete', async (req, res) => {
      const ref = `${req.params.id as string}/${req.params.alias as string}`;
      if (!boolValue(req.query.link)) throw EngineError.notFound(`No such container: ${ref}`);
      if (!runtime.removeLink) throw EngineError.notImplemented(`docker rm --link: legacy links are not supported by the ${runtime.name ?? 'custom'} runtime`);
      await runtime.removeLink(req.params.id as string, req.params.alias as string);
      res.status(204).end();
    }),
  );
}

/** `condition` counts from API 1.30; an unknown one is ignored before 1.42 and a 400 from then on. */
function waitCondition(value: string | undefined, version: string): WaitCondition {
  if (apiVersionLessThan(version, '1.30') || value === undefined || value === '') return 'not-running';
  if ((WAIT_CONDITIONS as readonly string[]).includes(value)) return value as WaitCondition;
  if (apiVersionAtLeast(version, '1.42')) throw EngineError.invalidParameter(`invalid condition: ${JSON.stringify(value)}`);
  return 'not-running';
}
