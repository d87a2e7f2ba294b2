import { EngineError } from '../../../../engine-api/engine-error.js';
import { resolveGroupsIn, resolveUserIn } from '../passwd.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/**
 * Who runs (`User`, names from the image's /etc/passwd and /etc/group; `GroupAdd` as supplementary
 * gids), and the environment: runc sets HOME from the passwd entry when the environment has none.
 * Supplementary groups are set by the launcher of the runtime's user namespace (userns/enter.ts);
 * without one (rootless, or option `userns: false`), bubblewrap maps a single gid and GroupAdd is refused by name.
 */
export const user: Stage<StartContext> = {
  name: 'user',
  async run(ctx) {
    const { spec, env, tty } = ctx.run;
    ctx.user = await resolveUserIn(ctx.rootfs, spec.user);
    if (spec.host.groupAdd.length > 0) {
      if (!ctx.userns) throw EngineError.invalidParameter('HostConfig.GroupAdd is not supported by the sandbox runtime without its user namespace (rootless, or option userns off: bubblewrap maps a single group)');
      ctx.user = { ...ctx.user, groups: await resolveGroupsIn(ctx.rootfs, spec.host.groupAdd) };
    }
    const fullEnv = [...env];
    if (!fullEnv.some((e) => e.startsWith('HOME='))) fullEnv.push(`HOME=${ctx.user.home}`);
    if (tty && !fullEnv.some((e) => e.startsWith('TERM='))) fullEnv.push('TERM=xterm');
    ctx.env = fullEnv;
  },
};

/**
 * Under the runtime's user namespace: the tmpfs directories belong to container root, and the
 * launcher enters the namespace as the user. Rootless with a mapped range, the launcher enters
 * that namespace (container root there is the server's user, who owns the tmpfs directories).
 */
export const userns: Stage<StartContext> = {
  name: 'userns',
  async run(ctx) {
    const { mapped } = ctx.host;
    if (mapped) {
      mapped.checkUser(ctx.user, ctx.run.spec.user);
      // Its held bind sources are mounted by their walked paths and checked to be the held objects (held-binds.ts identities).
      const held = await ctx.held.identities();
      ctx.enter = await mapped.enter(ctx.user, mapped.indexOf(ctx.run.spec.labels), held);
      // Its execs go in as its start did (userns/exec-mapped.ts): a non-root user's into bwrap's nested namespace, held binds staged.
      ctx.mappedExec = await mapped.execEnter(mapped.indexOf(ctx.run.spec.labels), held, ctx.user.uid === 0);
      return;
    }
    if (!ctx.userns) return;
    ctx.userns.ownByContainerRoot(Object.values(ctx.tmpfs));
    ctx.enter = await ctx.userns.enter(ctx.user);
  },
};
