import { resolveUserIn } from '../passwd.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** Who runs (`User`, names from the image's /etc/passwd and /etc/group), and the environment: runc sets HOME from the passwd entry when the environment has none. */
export const user: Stage<StartContext> = {
  name: 'user',
  async run(ctx) {
    const { spec, env, tty } = ctx.run;
    ctx.user = await resolveUserIn(ctx.rootfs, spec.user);
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
      ctx.enter = await mapped.enter(ctx.user, mapped.indexOf(ctx.run.spec.labels));
      return;
    }
    if (!ctx.userns) return;
    ctx.userns.ownByContainerRoot(Object.values(ctx.tmpfs));
    ctx.enter = await ctx.userns.enter(ctx.user);
  },
};
