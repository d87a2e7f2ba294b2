import { EngineError } from '../../../../engine-api/engine-error.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** Its cgroups with its limits (defaults added), made before the bwrap plan: the container sees them at /sys/fs/cgroup (cgroup-view.ts). */
export const cgroups: Stage<StartContext> = {
  name: 'cgroups',
  async run(ctx) {
    const limits = ctx.host.limitsOf(ctx.run.spec);
    try {
      ctx.group = await ctx.host.cgroups?.make(ctx.run.id, limits);
    } catch (error) {
      throw EngineError.system(`cannot set the container's resource limits: ${(error as Error).message}`, error);
    }
  },
  async undo(ctx) {
    await ctx.group?.remove();
  },
};
