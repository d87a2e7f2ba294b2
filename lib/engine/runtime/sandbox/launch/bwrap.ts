import { bwrapArgs } from '../bwrap-args.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** How it runs under bubblewrap (bwrap-args.ts): its root, user, tmpfs, filter, groups, binds through their held descriptors, network files. */
export const bwrap: Stage<StartContext> = {
  name: 'bwrap',
  run(ctx) {
    const { rootfs, user, tmpfs, seccompFile, group, userns, net, joinedFiles, held } = ctx;
    ctx.plan = {
      rootfs, user, tty: ctx.run.tty === true, tmpfs, ...(seccompFile ? { seccompFile } : {}), ...(group ? { cgroupDirs: group.dirs } : {}),
      ...(userns ? { userns: true, bindSource: (source: string) => held.path(source) } : {}), ...(net ? { files: net.files } : {}), ...(joinedFiles ? { files: joinedFiles } : {}),
    };
    ctx.args = [...bwrapArgs(ctx.run.spec, ctx.plan), ...(net ? ['--unshare-net', ...net.gate.bwrapArgs()] : [])];
  },
};
