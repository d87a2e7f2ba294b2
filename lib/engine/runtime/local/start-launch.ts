import type { LocalContainer, LocalExecutor, LocalProcess } from './local-container.js';
import type { LocalVolumes } from './local-volumes.js';
import type { ContainerTable } from './container-table.js';
import { runSpec } from './run-spec.js';
import { copyUp } from './volume-mounts.js';
import { resolveMountSources } from './mount-sources.js';
import { checkJoinedRuns } from './joined-container.js';

/** What the part of a start before the container's process needs from the runtime. */
export interface LaunchHost {
  readonly executor: LocalExecutor;
  readonly volumes: LocalVolumes | undefined;
  readonly table: ContainerTable;
  /** Keeps the container's changed record. */
  save(c: LocalContainer): void;
}

/**
 * Everything a start does before the container runs: the joined container's check, the mount
 * sources, the volumes' copy-up and the executor's launch. The caller sets the answer as
 * `c.startup` before it awaits anything, so an `rm -f`, stop or kill sent at any point of a start
 * (a long copy-up too) waits for it instead of finding no process and letting one come up after.
 */
export async function launchContainer(c: LocalContainer, host: LaunchHost): Promise<LocalProcess> {
  const { executor } = host;
  if (executor.userNetworks) checkJoinedRuns(c.spec, host.table);
  // A record kept by a server that did not resolve sources at create: resolved now, once.
  if (c.mounts) await resolveMountSources(c.mounts);
  // Each empty volume filled with what the image has at its path, once (dockerd's copy-up).
  const fs = executor.filesystem;
  if (await copyUp(c, host.volumes, fs && ((c2, path, into) => fs.copyImagePath(c2, path, into)))) host.save(c);
  return executor.start({
    argv: c.argv,
    env: c.env,
    image: c.image,
    openStdin: c.openStdin,
    id: c.id,
    name: c.name,
    spec: runSpec(c),
    tty: c.tty,
    output: (stream, data) => {
      c.log.append(c.tty ? 1 : stream, data);
      if (c.log.full) c.process?.pause();
    },
  });
}
