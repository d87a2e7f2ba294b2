import type { LocalProcess } from '../../local/local-container.js';
import type { StartContext } from './start-context.js';

/**
 * A container whose stages all ran: recorded as running (for its execs, `docker update` and
 * stats), and at its exit its tmpfs directories, network and groups taken down. The OOM count
 * is read, then the (now empty) groups removed, before the exit is reported; the group is looked
 * up at exit, since `docker update` may have replaced it meanwhile.
 */
export function started(ctx: StartContext): LocalProcess {
  const { id, spec } = ctx.run;
  const { running, groups, sharedTmpfs, userNets, stopReasons } = ctx.host;
  const { proc, plan, group, net, settings } = ctx;
  running.set(id, { plan, cgroupProcs: group?.procs ?? [], spec, env: ctx.run.env, ...(ctx.tmpfsNs ? { tmpfsNs: ctx.tmpfsNs } : {}), ...(ctx.mappedExec ? { mappedExec: ctx.mappedExec } : {}) });
  if (group) groups.set(id, group);
  let oomKilled = false;
  const exited = proc.exited.then(async (code) => {
    running.delete(id);
    await Promise.resolve(sharedTmpfs.remove(id)).catch(() => undefined);
    await userNets?.stopped(id);
    await net?.stop();
    const last = groups.get(id);
    groups.delete(id);
    oomKilled = last?.oomKilled() === true;
    await last?.remove();
    return code;
  });
  return {
    ...proc, exited, oomKilled: () => oomKilled, memoryUsage: () => groups.get(id)?.memoryUsage(), stopReason: () => stopReasons.get(id),
    ...(settings ? { network: settings } : {}),
  };
}
