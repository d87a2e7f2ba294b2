import { join } from 'node:path';
import type { LocalExecutor } from '../local/local-container.js';
import { execInSandbox } from './container-exec.js';
import { resolveBuildUser } from './passwd.js';
import { SANDBOX_CREATE_FIELDS } from './sandbox-fields.js';
import { SandboxFilesystem } from './sandbox-filesystem.js';
import { openSandboxImageStore } from './sandbox-image-store.js';
import { SandboxLimits } from './sandbox-limits.js';
import { startSandbox } from './sandbox-start.js';
import type { SandboxState } from './sandbox-state.js';
import { closeSandbox, removeSandboxContainer } from './sandbox-teardown.js';
import { validateSandboxCreate } from './sandbox-validate.js';

/**
 * The sandbox as the local runtime drives it (local-container.ts's executor): each part in its
 * own file, over the runtime's state (sandbox-state.ts).
 *
 * | part        | file                  | what                                                  |
 * | ----------- | --------------------- | ----------------------------------------------------- |
 * | images      | sandbox-image-store   | the content-addressed store, seeded                   |
 * | validate    | sandbox-validate      | create's refusals                                     |
 * | start       | sandbox-start         | held binds, then the launch stages (launch/)          |
 * | exec        | container-exec        | into a running container's namespaces                 |
 * | filesystem  | sandbox-filesystem    | diff, commit, export, cp, a volume's first content    |
 * | limits      | sandbox-limits        | `docker update`, `docker info`                        |
 * | removed     | sandbox-teardown      | a container's root, tmpfs and endpoints; and close    |
 */
export function sandboxExecutor(state: SandboxState): LocalExecutor {
  const { userNets, owners, stateDir, settings } = state;
  return {
    networks: ['bridge', 'host', 'none'],
    // Clients (docker-py's tests) create with `runc` and expect it back: the name dockerd's default has.
    ociRuntime: 'runc',
    ...(userNets ? { userNetworks: userNets } : {}),
    stateDir: state.containersDir,
    // Named volumes (`local` driver): directories under the state dir, bound in like Binds.
    volumes: {
      dir: join(stateDir, 'volumes'),
      // Under the user namespace a volume belongs to container root's host ids in its owner's range, or root in it could not write it.
      owner: (labels) => {
        const map = owners?.of(labels).map;
        return map ? { uid: map.uid, gid: map.gid } : undefined;
      },
    },
    images: { open: (usage) => openSandboxImageStore(state, usage) },
    // Any running container takes an exec.
    exec: { check: () => undefined, run: (run) => execInSandbox(state, run) },
    createFields: SANDBOX_CREATE_FIELDS,
    validate: (spec, image) => validateSandboxCreate(state, spec, image),
    filesystem: new SandboxFilesystem(state),
    build: { dir: join(stateDir, 'build'), maxContextBytes: settings.defaults.maxBuildContextBytes, resolveUser: resolveBuildUser },
    limits: new SandboxLimits(state),
    close: () => closeSandbox(state),
    removed: (id) => removeSandboxContainer(state, id),
    start: (run) => startSandbox(state, run),
  };
}
