import { EngineError } from '../../../../engine-api/engine-error.js';
import { tmpfsPaths } from '../bwrap-args.js';
import { tmpfsMount } from '../tmpfs-options.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** The host directories behind its `Tmpfs` mounts (shared-tmpfs.ts), emptied at each start so `docker exec` sees what the container writes there. */
export const tmpfs: Stage<StartContext> = {
  name: 'tmpfs',
  run(ctx) {
    const { id, spec } = ctx.run;
    try {
      ctx.tmpfs = ctx.host.sharedTmpfs.prepare(id, tmpfsPaths(spec).map((path) => tmpfsMount(path, spec.host.tmpfs[path], ctx.host.tmpfsSize)));
    } catch (error) {
      throw EngineError.system(`cannot prepare the container's tmpfs directories: ${(error as Error).message}`, error);
    }
  },
  undo(ctx) {
    ctx.host.sharedTmpfs.remove(ctx.run.id);
  },
};
