import { join } from 'node:path';
import { prepareSeccomp } from '../seccomp/container-seccomp.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** Its seccomp filter (Docker's default profile with its capabilities), compiled into its directory; none with option `seccomp` false or `seccomp=unconfined`. */
export const seccomp: Stage<StartContext> = {
  name: 'seccomp',
  run(ctx) {
    const { id, spec } = ctx.run;
    ctx.seccompFile = ctx.host.seccomp ? prepareSeccomp(spec, join(ctx.host.containersDir, id, 'seccomp.bpf')) : undefined;
  },
};
