import type { Request, Router } from 'express';
import { engineLocals, engineRoute, routeBody, type EngineContext } from '../http/context.js';
import { ownedFilters } from '../http/checkpoint.js';
import { OWNER_LABEL } from '../../policy/owner-label.js';
import { EngineError } from '../../../engine-api/engine-error.js';
import { writeEngineJson } from '../../errors/write-engine-error.js';
import { boolValue, queryString } from '../http/query.js';
import { checkLabels } from '../http/labels-body.js';
import { parseFilters } from '../../../engine-api/filters.js';
import { apiVersionAtLeast } from '../../../engine-api/api-version.js';
import { visibleNetworks, withOwnContainers } from './network-visibility.js';
import type { NetworkConnectBody, NetworkCreateBody } from '../../../engine-api/network-operations.js';

const NETWORK_FILTERS = ['name', 'id', 'driver', 'type', 'scope', 'label', 'dangling'];
const NETWORK_PRUNE_FILTERS = ['label', 'label!', 'until'];

/**
 * Networks: `POST /networks/create`, `DELETE /networks/{id}`, `POST /networks/prune`,
 * `POST /networks/{id}/connect` and `/disconnect` (`docker network create/rm/prune/connect/disconnect`),
 * then `GET /networks` and `GET /networks/{id}`. Listing is what clients do before anything else
 * (`docker network ls`, testcontainers). A runtime without the operation answers 501 naming it.
 */
export function registerNetworkRoutes(api: Router, ctx: EngineContext): void {
  const { runtime } = ctx;
  const param = (req: Request): string => (req.params as Record<string, string>).id ?? '';
  const jsonBody = async (req: Request, res: Parameters<Parameters<typeof engineRoute>[2]>[1], what: string): Promise<Record<string, unknown>> => {
    const body = (await routeBody(ctx, req, res)) ?? {};
    if (typeof body !== 'object' || Array.isArray(body)) throw EngineError.invalidParameter(`${what} body must be a JSON object`);
    return body as Record<string, unknown>;
  };

  api.post(
    '/networks/create',
    engineRoute(ctx, 'network.create', async (req, res, version) => {
      if (!runtime.createNetwork) {
        req.resume();
        throw EngineError.unsupported('creating networks', runtime.name);
      }
      const body = await jsonBody(req, res, 'network create');
      if (typeof body.Name !== 'string' || body.Name === '') throw EngineError.invalidParameter('network name must be a non-empty string');
      for (const field of ['Driver', 'Scope'] as const) {
        if (body[field] !== undefined && typeof body[field] !== 'string') throw EngineError.invalidParameter(`network ${field} must be a string`);
      }
      for (const field of ['Internal', 'Attachable', 'Ingress', 'EnableIPv6', 'CheckDuplicate', 'ConfigOnly'] as const) {
        if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'boolean') throw EngineError.invalidParameter(`network ${field} must be a boolean`);
      }
      checkLabels(body.Labels, 'NetworkCreateRequest');
      // Under a policy the network records its creator, as containers and volumes do.
      const subject = engineLocals(res).policy?.caller.subject;
      const labels = body.Labels as Record<string, string> | undefined;
      const create = subject !== undefined && labels?.[OWNER_LABEL] === undefined ? { ...body, Labels: { ...(labels ?? {}), [OWNER_LABEL]: subject } } : body;
      writeEngineJson(res.status(201), await runtime.createNetwork(create as NetworkCreateBody, version));
    }),
  );

  api.post(
    '/networks/prune',
    engineRoute(ctx, 'network.prune', async (req, res) => {
      if (!runtime.pruneNetworks) throw EngineError.unsupported('pruning networks', runtime.name);
      // Narrowed to the caller's own networks when the policy says so.
      const filters = ownedFilters(parseFilters(queryString(req.query.filters), NETWORK_PRUNE_FILTERS), engineLocals(res).policy?.onlyOwner);
      const { NetworksDeleted } = await runtime.pruneNetworks(filters);
      // dockerd answers null when nothing was removed.
      writeEngineJson(res.status(200), { NetworksDeleted: NetworksDeleted && NetworksDeleted.length > 0 ? NetworksDeleted : null });
    }),
  );

  api.delete(
    '/networks/:id',
    engineRoute(ctx, 'network.delete', async (req, res) => {
      if (!runtime.removeNetwork) throw EngineError.unsupported('removing networks', runtime.name);
      await runtime.removeNetwork(param(req));
      res.status(204).end();
    }),
  );

  api.post(
    '/networks/:id/connect',
    engineRoute(ctx, 'network.connect', async (req, res) => {
      if (!runtime.connectNetwork) {
        req.resume();
        throw EngineError.unsupported('connecting containers to networks', runtime.name);
      }
      const body = await jsonBody(req, res, 'network connect');
      if (typeof body.Container !== 'string' || body.Container === '') throw EngineError.invalidParameter('Container must be a container name or id');
      const config = body.EndpointConfig;
      if (config !== undefined && config !== null && (typeof config !== 'object' || Array.isArray(config))) throw EngineError.invalidParameter('EndpointConfig must be an object');
      await runtime.connectNetwork(param(req), body as NetworkConnectBody);
      res.status(200).end();
    }),
  );

  api.post(
    '/networks/:id/disconnect',
    engineRoute(ctx, 'network.disconnect', async (req, res) => {
      if (!runtime.disconnectNetwork) {
        req.resume();
        throw EngineError.unsupported('disconnecting containers from networks', runtime.name);
      }
      const body = await jsonBody(req, res, 'network disconnect');
      if (typeof body.Container !== 'string' || body.Container === '') throw EngineError.invalidParameter('Container must be a container name or id');
      if (body.Force !== undefined && typeof body.Force !== 'boolean') throw EngineError.invalidParameter('Force must be a boolean');
      await runtime.disconnectNetwork(param(req), body.Container, body.Force === true);
      res.status(200).end();
    }),
  );

  api.get(
    '/networks',
    engineRoute(ctx, 'network.list', async (req, res, version) => {
      if (!runtime.listNetworks) throw EngineError.unsupported('listing networks', runtime.name);
      const onlyOwner = engineLocals(res).policy?.onlyOwner;
      const networks = visibleNetworks(await runtime.listNetworks(parseFilters(queryString(req.query.filters), NETWORK_FILTERS), version), onlyOwner);
      // From API 1.28 the list no longer carries each network's containers; only inspect does.
      const trimmed = apiVersionAtLeast(version, '1.28') ? networks.map((n) => ({ ...n, Containers: {} })) : await withOwnContainers(runtime, networks, onlyOwner);
      writeEngineJson(res.status(200), trimmed);
    }),
  );

  api.get(
    '/networks/:id',
    engineRoute(ctx, 'network.inspect', async (req, res, version) => {
      if (!runtime.inspectNetwork) throw EngineError.unsupported('inspecting networks', runtime.name);
      const scope = queryString(req.query.scope);
      if (scope !== undefined && scope !== '' && !['local', 'swarm', 'global'].includes(scope)) {
        throw EngineError.invalidParameter(`invalid scope: ${scope}`);
      }
      const network = await runtime.inspectNetwork(param(req), {
        // `verbose` arrived in API 1.28, `scope` in 1.31; older requests get neither, as from dockerd.
        verbose: apiVersionAtLeast(version, '1.28') && boolValue(req.query.verbose),
        ...(scope && apiVersionAtLeast(version, '1.31') ? { scope } : {}),
        apiVersion: version,
      });
      const [shown] = await withOwnContainers(runtime, [network], engineLocals(res).policy?.onlyOwner);
      writeEngineJson(res.status(200), shown);
    }),
  );
}
