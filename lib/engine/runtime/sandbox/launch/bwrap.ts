import { bwrapArgs } from '../bwrap-args.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** How it runs under bubblewrap (bwrap-args.ts): its root, user, tmpfs, filter, groups, binds through their held descriptors, network files. */
export const bwrap: Stage<StartContext> = {
  name: 'bwrap',
  run(ctx) {
    const { rootfs, user, tmpfs, seccompFile, group, userns, net, joinedFiles, etcFiles, held, joined } = ctx;
    const files = { ...etcFiles, ...net?.files, ...joinedFiles };
    // Its UTS namespace is named as dockerd names it: its Hostname, else its short id (a joined container's, for `container:`); host network mode keeps the host's.
    const { spec } = ctx.run;
    const hostname = spec.hostname !== '' ? spec.hostname : spec.host.networkMode === 'host' ? undefined : (joined?.id ?? ctx.run.id).slice(0, 12);
    // Rootless, `container:ID` joins that container's user namespace too (launch.ts): bwrap makes none of its own there.
    const joinsUserns = joined !== undefined && ctx.host.network.userns !== undefined;
    ctx.plan = {
      rootfs, user, tty: ctx.run.tty === true, tmpfs, ...(seccompFile ? { seccompFile } : {}), ...(group ? { cgroupDirs: group.dirs } : {}),
      // Rootless with a mapped range: the launcher enters the namespace too. Every bind source is
      // its held descriptor (held-binds.ts): the launcher's staging mounts it, by its walked path
      // there (the descriptor's link cannot be followed from inside), checked to be the held object.
      ...(userns || ctx.host.mapped ? { bindSource: (source: string) => held.path(source) } : {}),
      ...(userns || ctx.host.mapped ? { userns: true } : {}), ...(Object.keys(files).length > 0 ? { files } : {}),
      ...(hostname ? { hostname } : {}), ...(joinsUserns ? { userns: true } : {}),
    };
    ctx.args = [...bwrapArgs(spec, ctx.plan), ...(net ? ['--unshare-net', ...net.gate.bwrapArgs()] : [])];
  },
};
