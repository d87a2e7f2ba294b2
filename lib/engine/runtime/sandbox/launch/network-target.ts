import { joinedContainerId } from '../../local/joined-container.js';
import { ownsNetwork } from '../network/container-network.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/**
 * First: a user network it names may be gone (404 `network x not found`), and nothing is
 * prepared yet to undo. `--network container:ID` (the id create resolved, checked by the runtime
 * to exist and run): its namespace, found before the tmpfs mounts are made, so that a refusal
 * leaves none behind.
 */
export const networkTarget: Stage<StartContext> = {
  name: 'network target',
  run(ctx) {
    const { id, spec } = ctx.run;
    const { userNets } = ctx.host;
    ctx.userPlan = ownsNetwork(spec) ? userNets?.prepareStart(id, spec) : undefined;
    const joinedId = joinedContainerId(spec);
    ctx.joined = joinedId !== undefined && userNets ? userNets.joinTarget(joinedId) : undefined;
  },
};
