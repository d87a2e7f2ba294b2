import { EngineError } from '../../../../engine-api/engine-error.js';
import { tmpfsPaths } from '../bwrap-args.js';
import { tmpfsMount } from '../tmpfs-options.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** The host directories behind its `Tmpfs` mounts (shared-tmpfs.ts), emptied at each start so `docker exec` sees what the container writes there. */
export const tmpfs: Stage<StartContext> = {
  name: 'tmpfs',
  async run(ctx) {
    const { id, spec } = ctx.run;
    try {
      ctx.tmpfs = await ctx.host.sharedTmpfs.prepare(id, tmpfsPaths(spec).map((path) => tmpfsMount(path, spec.host.tmpfs[path], ctx.host.tmpfsSize)));
      // Rootless: mounted in the server's own mount namespace, which the launcher and execs enter (rootless-tmpfs.ts).
      const ns = Object.keys(ctx.tmpfs).length > 0 ? ctx.host.sharedTmpfs.namespace?.() : undefined;
      if (ns) ctx.tmpfsNs = ns;
    } catch (error) {
      throw EngineError.system(`cannot prepare the container's tmpfs directories: ${(error as Error).message}`, error);
    }
  },
  async undo(ctx) {
    await ctx.host.sharedTmpfs.remove(ctx.run.id);
  },
};
