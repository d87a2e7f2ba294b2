import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** Its root filesystem copy, made at its first start (for its owner's user namespace); a restart keeps its writes. */
export const rootfs: Stage<StartContext> = {
  name: 'rootfs',
  async run(ctx) {
    const { id, image, spec } = ctx.run;
    ctx.userns = ctx.host.usernsOf(spec);
    ctx.rootfs = await ctx.host.ensureRootfs({ id, image, spec });
  },
};
