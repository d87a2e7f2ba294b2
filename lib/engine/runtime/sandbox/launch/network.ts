import { join } from 'node:path';
import { ContainerNetwork, ownsNetwork, type UserNetworkPlan } from '../network/container-network.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/**
 * Its own network namespace (bridge mode, or its user networks): its files and the gate where
 * the command waits until the stack is up (connect stage). `--network container:REF` (the
 * network target stage): none here, the launch enters that container's namespace.
 */
export const network: Stage<StartContext> = {
  name: 'network',
  async run(ctx) {
    const { id, name, spec } = ctx.run;
    const { userNets, containersDir } = ctx.host;
    const userPlan = ctx.userPlan;
    const userNetPlan: UserNetworkPlan | undefined = userPlan && userNets ? {
      ...userPlan,
      attach: (pid) => userNets.attachAll(id, name ?? id.slice(0, 12), pid, !userPlan.internalOnly),
      endpoints: () => userNets.endpoints({ id }),
    } : undefined;
    ctx.net = ownsNetwork(spec) ? await ContainerNetwork.prepare(ctx.host.network, id, spec, join(containersDir, id), ctx.rootfs, userNetPlan) : undefined;
  },
  async undo(ctx) {
    await ctx.net?.stop();
  },
};
