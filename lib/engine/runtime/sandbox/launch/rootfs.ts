import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** Its root filesystem: the overlay of its image for its owner's range, mounted at its first start (overlay-rootfs.ts); a restart keeps its writes. */
export const rootfs: Stage<StartContext> = {
  name: 'rootfs',
  async run(ctx) {
    const { id, image, spec } = ctx.run;
    ctx.userns = ctx.host.usernsOf(spec);
    ctx.rootfs = await ctx.host.ensureRootfs({ id, image, spec });
  },
};
