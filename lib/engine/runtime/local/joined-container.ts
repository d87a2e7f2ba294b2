import { EngineError } from '../../../engine-api/engine-error.js';
import type { ContainerSpec } from '../../../engine-api/container-spec.js';

const PREFIX = 'container:';
const FULL_ID = /^[0-9a-f]{64}$/;

/**
 * `--network container:REF` resolved once, at create: the spec with its network mode
 * `container:<full id>` (what inspect then shows, as dockerd's), so that no later start looks the
 * reference up again by name or id prefix, where it could name another container by then. A
 * reference naming nothing is a 400 naming the field (a 404 would make the CLI pull the image).
 */
export function withJoinedContainerId(spec: ContainerSpec, resolve: (ref: string) => string): ContainerSpec {
  const mode = spec.host.networkMode;
  if (!mode.startsWith(PREFIX) || mode === PREFIX) return spec;
  let id: string;
  try {
    id = resolve(mode.slice(PREFIX.length));
  } catch (error) {
    if (error instanceof EngineError && error.kind === 'NotFound') throw EngineError.invalidParameter(`HostConfig.NetworkMode: ${error.message}`);
    throw error;
  }
  return { ...spec, host: { ...spec.host, networkMode: `${PREFIX}${id}` } };
}

/**
 * The full id of the container whose network namespace a container joins, as stored at create;
 * undefined when it joins none. A reference that is not a full id (a record an older dockgate
 * kept by name or prefix) is refused rather than looked up again.
 */
export function joinedContainerId(spec: ContainerSpec): string | undefined {
  const mode = spec.host.networkMode;
  if (!mode.startsWith(PREFIX)) return undefined;
  const ref = mode.slice(PREFIX.length);
  if (!FULL_ID.test(ref)) {
    throw EngineError.invalidParameter(`HostConfig.NetworkMode "${mode}" names no container id (it was kept by an older server, before references were resolved at create): remove the container and create it again`);
  }
  return ref;
}

/**
 * `--network container:ID` at a start: the container of the id stored at create must still exist
 * (404) and run (409, dockerd's words). Only that id: nothing is looked up again by name or prefix.
 */
export function checkJoinedRuns(spec: ContainerSpec, table: { has(id: string): boolean; resolve(ref: string): { status: string } }): void {
  const id = joinedContainerId(spec);
  if (id === undefined) return;
  const target = table.has(id) ? table.resolve(id) : undefined;
  if (!target || target.status === 'removing') throw EngineError.notFound(`No such container: ${id}`);
  if (target.status !== 'running') throw EngineError.conflict(`cannot join network of a non running container: ${id}`);
}
