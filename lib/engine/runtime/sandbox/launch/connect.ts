import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** Its network's stack started on bwrap's namespace and its user networks attached, then the gate released: the command runs. */
export const connect: Stage<StartContext> = {
  name: 'connect',
  async run(ctx) {
    ctx.settings = await ctx.net?.connect(ctx.proc.exited);
  },
};
