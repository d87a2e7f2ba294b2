import type { ExecOperations } from '../../../engine-api/exec-operations.js';
import type { ContainerOperations } from '../../../engine-api/container-operations.js';
import type { LocalContainer, LocalExecutor } from './local-container.js';
import { LocalExecs } from './local-exec.js';
import { LocalContainerOps, type LocalOpsHost } from './local-container-ops.js';
import { LocalArchive } from './local-archive.js';
import { withoutMountedPaths } from './mounted-paths.js';

/** What a local runtime offers beyond the lifecycle: exec and archive only where the executor can. */
export type LocalOperations = Partial<ExecOperations> &
  Pick<ContainerOperations, 'restart' | 'rename' | 'pause' | 'unpause' | 'top' | 'stats' | 'pruneContainers' | 'update'> &
  Partial<Pick<ContainerOperations, 'removeLink' | 'statPath' | 'getArchive' | 'putArchive' | 'changes' | 'exportContainer'>>;

/**
 * The exec and container operations of a local runtime, as methods to mix into it. Exec exists
 * only when the executor can run a command inside a container, `docker cp` only when it also
 * has a filesystem of each container's own, `changes` and `export` only with that filesystem; otherwise those routes answer 501.
 */
export function localOperations(host: LocalOpsHost, executor: LocalExecutor): LocalOperations {
  const fs = executor.filesystem;
  // What a removed container had written (dockerd's SizeRw), for prune's SpaceReclaimed.
  const sizeRw = fs
    ? async (c: LocalContainer): Promise<number> => fs.sizeOfChanges(c, withoutMountedPaths(await fs.changes(c)))
    : undefined;
  const ops = new LocalContainerOps(host, sizeRw);
  const out: LocalOperations = {
    restart: (ref, o) => ops.restart(ref, o),
    rename: (ref, n) => ops.rename(ref, n),
    pause: (ref) => ops.pause(ref),
    unpause: (ref) => ops.unpause(ref),
    top: (ref, a) => ops.top(ref, a),
    stats: (ref, o) => ops.stats(ref, o),
    pruneContainers: (filters) => ops.prune(filters),
    update: (ref, b) => ops.update(ref, b, executor.limits?.update.bind(executor.limits)),
  };
  const unlinked = executor.userNetworks?.unlinked?.bind(executor.userNetworks);
  if (unlinked) out.removeLink = (ref, alias) => ops.removeLink(ref, alias, unlinked);
  if (fs) {
    // Mount points and init-layer files are not changes, as dockerd lists them (mounted-paths.ts).
    out.changes = async (ref) => withoutMountedPaths(await fs.changes(host.resolve(ref)));
    out.exportContainer = async (ref, signal) => fs.exportRootfs(host.resolve(ref), signal);
  }
  if (!executor.exec) return out;
  const execs = new LocalExecs(host.name, executor, (action, c, extra) => host.publish(action, c, extra));
  Object.assign(out, {
    createExec: async (ref, spec) => execs.create(host.resolve(ref), spec),
    startExec: (id, o) => execs.start(id, o),
    inspectExec: async (id) => execs.inspect(id),
    resizeExec: async (id, { height, width }) => execs.resize(id, height, width),
  } satisfies ExecOperations);
  // `docker cp` runs tar and stat inside the container's own root filesystem.
  if (!fs) return out;
  const archive = new LocalArchive(executor.exec.bind(executor), fs);
  Object.assign(out, {
    statPath: (ref, path) => archive.stat(host.resolve(ref), path, ref),
    getArchive: (ref, path, signal) => archive.get(host.resolve(ref), path, ref, signal),
    putArchive: (ref, path, tar, o) => archive.put(host.resolve(ref), path, ref, tar, o),
  } satisfies Pick<ContainerOperations, 'statPath' | 'getArchive' | 'putArchive'>);
  return out;
}
