import { existsSync } from 'node:fs';
import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalExecProcess, LocalExecRun } from '../local/local-container.js';
import { resolveUserIn } from './passwd.js';
import { sandboxExec } from './sandbox-exec.js';
import type { SandboxState } from './sandbox-state.js';

/** `docker exec`: into the running container's namespaces, capabilities and cgroups (sandbox-exec.ts). */
export async function execInSandbox(state: SandboxState, run: LocalExecRun): Promise<LocalExecProcess> {
  const container = state.running.get(run.container.id);
  if (!container) throw EngineError.conflict(`Container ${run.container.id} is not running`);
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
