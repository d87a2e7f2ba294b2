/**
 * The stable names of everything the engine API does, one per route, and what each acts on.
 * A policy (`engineRouter`'s `policy` option) sees these names; they do not change between
 * releases, so a host can `switch` on them. Every route of `engineRouter` declares one (its
 * handler cannot be registered without it), and the checkpoint resolves the target before the
 * policy runs:
 *
 * - `container`: the `{id}` of the path, resolved to the container's full id and owner;
 * - `exec`: the exec id of the path, with the container it runs in and that container's owner;
 * - `image`: the `{name}` of the path (the image it names, with its tags when it exists);
 * - `volume`: the `{name}` of the path, with the volume's owner when it exists;
 * - `network`: the `{id}` of the path, with the network's owner when it exists;
 * - `none`: no single object (lists, pings, creates; a create's parsed body is given instead).
 *
 * Collection actions (`collection: true`) answer about many objects; a policy may narrow them to
 * one owner's containers (or volumes, for `volume.list`; networks, for `network.list` and
 * `network.prune`; see `PolicyDecision.onlyOwner`).
 */
export const ENGINE_ACTIONS = {
  // System
  'system.ping': { route: 'HEAD|GET /_ping', target: 'none' },
  'system.version': { route: 'GET /version', target: 'none' },
  'system.options': { route: 'OPTIONS *', target: 'none' },
  'system.info': { route: 'GET /info', target: 'none', collection: true },
  'system.events': { route: 'GET /events', target: 'none', collection: true },
  'system.df': { route: 'GET /system/df', target: 'none', collection: true },
  'system.auth': { route: 'POST /auth', target: 'none' },
  // Containers
  'container.create': { route: 'POST /containers/create', target: 'none' },
  'container.list': { route: 'GET /containers/json', target: 'none', collection: true },
  'container.prune': { route: 'POST /containers/prune', target: 'none', collection: true },
  'container.inspect': { route: 'GET /containers/{id}/json', target: 'container' },
  'container.logs': { route: 'GET /containers/{id}/logs', target: 'container' },
  'container.start': { route: 'POST /containers/{id}/start', target: 'container' },
  'container.wait': { route: 'POST /containers/{id}/wait', target: 'container' },
  'container.attach': { route: 'POST /containers/{id}/attach', target: 'container' },
  'container.attach.ws': { route: 'GET /containers/{id}/attach/ws', target: 'container' },
  'container.delete': { route: 'DELETE /containers/{id}', target: 'container' },
  'container.kill': { route: 'POST /containers/{id}/kill', target: 'container' },
  'container.stop': { route: 'POST /containers/{id}/stop', target: 'container' },
  'container.restart': { route: 'POST /containers/{id}/restart', target: 'container' },
  'container.resize': { route: 'POST /containers/{id}/resize', target: 'container' },
  'container.rename': { route: 'POST /containers/{id}/rename', target: 'container' },
  'container.pause': { route: 'POST /containers/{id}/pause', target: 'container' },
  'container.unpause': { route: 'POST /containers/{id}/unpause', target: 'container' },
  'container.top': { route: 'GET /containers/{id}/top', target: 'container' },
  'container.stats': { route: 'GET /containers/{id}/stats', target: 'container' },
  'container.changes': { route: 'GET /containers/{id}/changes', target: 'container' },
  'container.update': { route: 'POST /containers/{id}/update', target: 'container' },
  'container.archive.stat': { route: 'HEAD /containers/{id}/archive', target: 'container' },
  'container.archive.get': { route: 'GET /containers/{id}/archive', target: 'container' },
  'container.archive.put': { route: 'PUT /containers/{id}/archive', target: 'container' },
  'container.export': { route: 'GET /containers/{id}/export', target: 'container' },
  // The container is the `container` query parameter; the image names written are `repo:tag`.
  'container.commit': { route: 'POST /commit', target: 'container' },
  // Execs
  'exec.create': { route: 'POST /containers/{id}/exec', target: 'container' },
  'exec.start': { route: 'POST /exec/{id}/start', target: 'exec' },
  'exec.inspect': { route: 'GET /exec/{id}/json', target: 'exec' },
  'exec.resize': { route: 'POST /exec/{id}/resize', target: 'exec' },
  // Images
  'image.pull': { route: 'POST /images/create', target: 'none' },
  'image.list': { route: 'GET /images/json', target: 'none' },
  'image.save': { route: 'GET /images/get, GET /images/{name}/get', target: 'none' },
  'image.load': { route: 'POST /images/load', target: 'none' },
  'image.import': { route: 'POST /images/create?fromSrc=…', target: 'none' },
  'image.prune': { route: 'POST /images/prune', target: 'none' },
  'image.inspect': { route: 'GET /images/{name}/json', target: 'image' },
  'image.history': { route: 'GET /images/{name}/history', target: 'image' },
  // Answered 501 naming the feature (system/unsupported-routes.ts): registry search, registry manifest inspection, BuildKit's session.
  'image.search': { route: 'GET /images/search', target: 'none' },
  'image.distribution': { route: 'GET /distribution/{name}/json', target: 'none' },
  'image.session': { route: 'POST /session', target: 'none' },
  'image.tag': { route: 'POST /images/{name}/tag', target: 'image' },
  'image.delete': { route: 'DELETE /images/{name}', target: 'image' },
  'image.push': { route: 'POST /images/{name}/push', target: 'image' },
  // RUN steps create containers owned by the caller; the image names written are the `t` tags.
  'image.build': { route: 'POST /build', target: 'none' },
  // Networks and volumes
  // Narrowed, a list shows the predefined networks and the owner's; an inspect's `Containers`, the owner's containers.
  'network.list': { route: 'GET /networks', target: 'none', collection: true },
  'network.inspect': { route: 'GET /networks/{id}', target: 'network' },
  'network.create': { route: 'POST /networks/create', target: 'none' },
  'network.delete': { route: 'DELETE /networks/{id}', target: 'network' },
  'network.connect': { route: 'POST /networks/{id}/connect', target: 'network' },
  'network.disconnect': { route: 'POST /networks/{id}/disconnect', target: 'network' },
  'network.prune': { route: 'POST /networks/prune', target: 'none', collection: true },
  'volume.list': { route: 'GET /volumes', target: 'none', collection: true },
  'volume.create': { route: 'POST /volumes/create', target: 'none' },
  'volume.prune': { route: 'POST /volumes/prune', target: 'none' },
  'volume.inspect': { route: 'GET /volumes/{name}', target: 'volume' },
  'volume.delete': { route: 'DELETE /volumes/{name}', target: 'volume' },
  // Plugins (a node without plugins: empty list, 404 for a name, 501 for what would fetch one; see plugin-routes.ts)
  'plugin.request': { route: 'GET|POST|DELETE /plugins and below', target: 'none' },
  // Swarm (answered "not a swarm manager" / 501: dockgate has no swarm, see swarm-routes.ts)
  'swarm.request': { route: 'GET|POST|DELETE /swarm, /nodes, /services, /tasks, /secrets, /configs and below', target: 'none' },
} as const satisfies Record<string, { route: string; target: 'none' | 'container' | 'exec' | 'image' | 'volume' | 'network'; collection?: true }>;

/** The stable name of one engine action (`container.create`, `image.pull`, …). */
export type EngineAction = keyof typeof ENGINE_ACTIONS;

/** What an action acts on (see {@link ENGINE_ACTIONS}). */
export type EngineActionTarget = (typeof ENGINE_ACTIONS)[EngineAction]['target'];

/** Every action name, in the table's order. */
export const ENGINE_ACTION_NAMES: readonly EngineAction[] = Object.freeze(Object.keys(ENGINE_ACTIONS) as EngineAction[]);

/** Whether an action answers about many containers (a policy may narrow it to one owner's). */
export function isCollectionAction(action: EngineAction): boolean {
  return 'collection' in ENGINE_ACTIONS[action];
}
