import type { ExecOperations } from '../../../engine-api/exec-operations.js';
import type { ContainerOperations } from '../../../engine-api/container-operations.js';
import type { ExecutorExec, ExecutorFilesystem, LocalContainer } from './local-container.js';
import type { LocalExecs } from './local-exec.js';
import { LocalArchive } from './local-archive.js';
import { withoutMountedPaths } from './mounted-paths.js';

/**
 * The container operations a local runtime has only where its executor can, as the runtime
 * takes them field by field: `docker diff` and `export` with a filesystem of each container's own,
 * exec with the executor's exec, `docker cp` with both; otherwise those routes answer 501.
 */

/** What a removed container had written (dockerd's SizeRw), for prune's SpaceReclaimed; undefined without a filesystem. */
export function sizeRwOf(fs: ExecutorFilesystem | undefined): ((c: LocalContainer) => Promise<number>) | undefined {
  return fs ? async (c) => fs.sizeOfChanges(c, withoutMountedPaths(await fs.changes(c))) : undefined;
}

/** `docker diff` and `docker export` over the container's own filesystem. Mount points and init-layer files are not changes, as dockerd lists them (mounted-paths.ts). */
export function filesystemOperations(fs: ExecutorFilesystem, resolve: (ref: string) => LocalContainer): Required<Pick<ContainerOperations, 'changes' | 'exportContainer'>> {
  return {
    changes: async (ref) => withoutMountedPaths(await fs.changes(resolve(ref))),
    exportContainer: async (ref, signal) => fs.exportRootfs(resolve(ref), signal),
  };
}

/** The exec routes over the runtime's exec instances (local-exec.ts). */
export function execOperations(execs: LocalExecs, resolve: (ref: string) => LocalContainer): ExecOperations {
  return {
    createExec: async (ref, spec) => execs.create(resolve(ref), spec),
    startExec: (id, o) => execs.start(id, o),
    inspectExec: async (id) => execs.inspect(id),
    resizeExec: async (id, { height, width }) => execs.resize(id, height, width),
  };
}

/** `docker cp`: tar and stat run inside the container's own root filesystem (local-archive.ts). */
export function archiveOperations(exec: ExecutorExec, fs: ExecutorFilesystem, resolve: (ref: string) => LocalContainer): Required<Pick<ContainerOperations, 'statPath' | 'getArchive' | 'putArchive'>> {
  const archive = new LocalArchive((run) => exec.run(run), fs);
  return {
    statPath: (ref, path) => archive.stat(resolve(ref), path, ref),
    getArchive: (ref, path, signal) => archive.get(resolve(ref), path, ref, signal),
    putArchive: (ref, path, tar, o) => archive.put(resolve(ref), path, ref, tar, o),
  };
}
