import type { Request, Router } from 'express';
import { engineRoute, type EngineContext } from '../http/context.js';
import { readJsonBody } from '../http/read-json-body.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { parseFilters } from '../../../engine-api/filters.js';
import { boolValue, queryString } from '../http/query.js';

/** dockerd's words (errNoSwarm / errSwarmNotManager in daemon/cluster/errors.go), kept exact: SDKs match on them. */
export const NOT_A_SWARM_MANAGER =
  'This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.';
export const NOT_PART_OF_A_SWARM = 'This node is not part of a swarm';

/**
 * The swarm routes of a node that is not in a swarm, which is what every dockgate node is:
 * dockgate has no swarm mode. Each route dockerd has answers as dockerd 20.10 does outside a
 * swarm — its request checks first (body JSON, `version`, filters), then 503 "This node is not
 * a swarm manager…", and `/swarm/leave` 503 "This node is not part of a swarm". SDKs rely on
 * these: docker-py's test teardowns call `leave_swarm(force=True)` and swallow only 406 and 503.
 * `/swarm/init` and `/swarm/join`, which dockerd would carry out, are refused with 501 naming
 * the missing feature instead: a node here cannot become part of a swarm.
 */
export function registerSwarmRoutes(api: Router, ctx: EngineContext): void {
  const notManager = (): EngineError => new EngineError('Unavailable', NOT_A_SWARM_MANAGER);
  const noSwarmMode = (what: string): EngineError => EngineError.notImplemented(`${what}: swarm mode is not supported by dockgate (the ${ctx.runtime.name ?? 'custom'} runtime has no swarm)`);
  const body = async (req: Request, type: string): Promise<void> => {
    const raw = await readJsonBody(req, ctx.settings.maxBodyBytes);
    if (raw === undefined) throw EngineError.invalidParameter('got EOF while reading request body');
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw EngineError.invalidParameter(`${type} must be a JSON object`);
  };
  // dockerd parses `filters` before it looks for the swarm, but checks the filter names only in the swarm.
  const list = engineRoute(ctx, 'swarm.request', (req) => {
    const filters = queryString(req.query.filters);
    if (filters !== undefined) parseFilters(filters, filterNames(filters));
    throw notManager();
  });
  const plain = engineRoute(ctx, 'swarm.request', (req) => {
    req.resume();
    throw notManager();
  });
  const withBody = (type: string) =>
    engineRoute(ctx, 'swarm.request', async (req) => {
      await body(req, type);
      throw notManager();
    });
  const update = (type: string, what: string, exact?: string) =>
    engineRoute(ctx, 'swarm.request', async (req) => {
      await body(req, type);
      objectVersion(queryString(req.query.version) ?? '', what, exact);
      throw notManager();
    });
  const logs = engineRoute(ctx, 'swarm.request', (req) => {
    // dockerd checks the streams before it looks for the swarm (its answer is a 500; the client's input is a 400 here).
    if (!boolValue(req.query.stdout) && !boolValue(req.query.stderr)) throw EngineError.invalidParameter('Bad parameters: you must choose at least one stream');
    throw notManager();
  });

  api.get('/swarm', plain);
  api.post(
    '/swarm/init',
    engineRoute(ctx, 'swarm.request', async (req) => {
      await body(req, 'swarm init request');
      throw noSwarmMode('docker swarm init');
    }),
  );
  api.post(
    '/swarm/join',
    engineRoute(ctx, 'swarm.request', async (req) => {
      await body(req, 'swarm join request');
      throw noSwarmMode('docker swarm join');
    }),
  );
  api.post(
    '/swarm/leave',
    engineRoute(ctx, 'swarm.request', (req) => {
      req.resume();
      throw new EngineError('Unavailable', NOT_PART_OF_A_SWARM);
    }),
  );
  api.post('/swarm/update', update('swarm spec', 'swarm'));
  api.get('/swarm/unlockkey', plain);
  api.post('/swarm/unlock', withBody('swarm unlock request'));

  api.get('/nodes', list);
  api.get('/nodes/:id', plain);
  api.delete('/nodes/:id', plain);
  api.post('/nodes/:id/update', update('node spec', 'node'));

  api.get('/services', list);
  api.post('/services/create', withBody('service spec'));
  api.get(
    '/services/:id',
    engineRoute(ctx, 'swarm.request', (req) => {
      const insertDefaults = queryString(req.query.insertDefaults);
      if (insertDefaults !== undefined && insertDefaults !== '' && !/^(1|0|t|f|true|false)$/i.test(insertDefaults)) {
        throw EngineError.invalidParameter(`invalid value for insertDefaults: ${insertDefaults}`);
      }
      throw notManager();
    }),
  );
  api.delete('/services/:id', plain);
  api.post('/services/:id/update', update('service spec', 'service'));
  api.get('/services/:id/logs', logs);

  api.get('/tasks', list);
  api.get('/tasks/:id', plain);
  api.get('/tasks/:id/logs', logs);

  for (const kind of ['secrets', 'configs'] as const) {
    const one = kind.slice(0, -1);
    api.get(`/${kind}`, list);
    api.post(`/${kind}/create`, withBody(`${one} spec`));
    api.get(`/${kind}/:id`, plain);
    api.delete(`/${kind}/:id`, plain);
    // dockerd's message for these two names no value: "invalid secret version".
    api.post(`/${kind}/:id/update`, update(`${one} spec`, one, `invalid ${one} version`));
  }
}

/**
 * The `version` query parameter of an update, read as dockerd's strconv.ParseUint(v, 10, 64),
 * with dockerd's message (`invalid <what> version '<v>': strconv.ParseUint: …`).
 */
function objectVersion(value: string, what: string, exact?: string): bigint {
  const fail = (reason: string): EngineError =>
    EngineError.invalidParameter(exact ?? `invalid ${what} version '${value}': strconv.ParseUint: parsing ${JSON.stringify(value)}: ${reason}`);
  if (!/^\d+$/.test(value)) throw fail('invalid syntax');
  const n = BigInt(value);
  if (n > 0xffffffffffffffffn) throw fail('value out of range');
  return n;
}

/** The names in a `filters` value, so that only its JSON is checked here; an unparsable value is left to parseFilters' 400. */
function filterNames(value: string): string[] {
  try {
    const raw: unknown = JSON.parse(value);
    return raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? Object.keys(raw) : [];
  } catch {
    return [];
  }
}
