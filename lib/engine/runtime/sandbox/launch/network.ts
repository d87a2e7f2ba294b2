import { EngineError } from '../../../../engine-api/engine-error.js';
import { join } from 'node:path';
import { ContainerNetwork, onDefaultBridge, ownsNetwork, type UserNetworkPlan } from '../network/container-network.js';
import { linkEnvironment, linkHostsLine, withLinkEnvironment, type BridgeLinkTarget } from '../network/bridge-links.js';
import { containerHostname } from '../network/etc-names.js';
import { exposedPortKeys } from '../network/port-bindings.js';
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
    // Legacy links on the default bridge: /etc/hosts lines and the link variables, as dockerd gives them.
    const links = userNets && onDefaultBridge(spec) ? bridgeTargets(ctx, (name ?? id).replace(/^\//, '')) : [];
    if (links.length > 0) ctx.env = withLinkEnvironment(ctx.env, links.flatMap((t) => linkEnvironment((name ?? id).replace(/^\//, ''), t)));
    ctx.net = ownsNetwork(spec) ? await ContainerNetwork.prepare(ctx.host.network, id, spec, join(containersDir, id), ctx.rootfs, userNetPlan, links.map(linkHostsLine)) : undefined;
  },
  async undo(ctx) {
    await ctx.net?.stop();
  },
};

/** The running containers its default-bridge links name (dockerd's 409 when one does not run), as bridge-links.ts needs them. */
function bridgeTargets(ctx: StartContext, linkingName: string): BridgeLinkTarget[] {
  return ctx.host.userNets!.bridgeLinks(ctx.run.id, linkingName).map((link) => {
    const target = ctx.host.running.get(link.id);
    if (!target) throw EngineError.conflict(`Cannot link to a non running container: /${link.name} AS /${linkingName}/${link.alias}`);
    return { alias: link.alias, name: link.name, ip: link.ip, hostname: containerHostname(link.id, target.spec), env: target.env ?? target.spec.env, ports: exposedPortKeys(target.spec) };
  });
}
