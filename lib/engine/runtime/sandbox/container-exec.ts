import { existsSync } from 'node:fs';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalExecProcess, LocalExecRun } from '../local/local-container.js';
import { resolveUserIn } from './passwd.js';
import { sandboxExec } from './sandbox-exec.js';
import type { SandboxState } from './sandbox-state.js';

/**
 * Rootless with a mapped range, a non-root container user runs in bwrap's nested single-id
 * namespace, which an exec cannot join yet: refused at exec create (its error as the answer).
 */
export function checkSandboxExec(state: SandboxState, c: { id: string }): void {
  const uid = state.running.get(c.id)?.plan.user.uid;
  if (state.mapped && uid !== undefined && uid !== 0) {
    throw EngineError.invalidParameter(`the container runs as uid ${uid} in a user namespace of its own nested in the rootless server's: the sandbox runtime cannot exec into it yet (run the container as root to exec into it)`);
  }
}

/** `docker exec`: into the running container's namespaces, capabilities and cgroups (sandbox-exec.ts). */
export async function execInSandbox(state: SandboxState, run: LocalExecRun): Promise<LocalExecProcess> {
  const container = state.running.get(run.container.id);
  if (!container) throw EngineError.conflict(`Container ${run.container.id} is not running`);
  checkSandboxExec(state, run.container);
  const { busybox, bwrap } = state.settings;
  const userns = state.usernsOf(run.container.spec);
  return sandboxExec(run, {
    bwrap,
    nsenter: state.hostTool('nsenter'),
    ...(existsSync(busybox) ? { busybox } : {}),
    ...container,
    resolveUser: (spec) => resolveUserIn(container.plan.rootfs, spec),
    ...(userns ? { enter: await userns.execEnter() } : {}),
  });
}
