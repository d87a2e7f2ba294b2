import { bwrap } from './bwrap.js';
import { cgroups } from './cgroups.js';
import { connect } from './connect.js';
import { etc } from './etc.js';
import { launch } from './launch.js';
import { network } from './network.js';
import { networkTarget } from './network-target.js';
import { rootfs } from './rootfs.js';
import { seccomp } from './seccomp.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';
import { tmpfs } from './tmpfs.js';
import { user, userns } from './user.js';

/**
 * A sandbox container's start, in order (run by runStages, stages.ts). What each makes, and
 * what a later failure undoes:
 *
 * | stage          | makes                                                   | undo                         |
 * | -------------- | ------------------------------------------------------- | ---------------------------- |
 * | network target | the user networks' plan, the joined namespace           |                              |
 * | rootfs         | the root overlay, mounted (kept: a restart reuses it)   |                              |
 * | etc            | /etc when missing, the joined container's network files |                              |
 * | user           | the user and the environment                            |                              |
 * | tmpfs          | the Tmpfs mounts' host directories                      | removed                      |
 * | userns         | their owner, the user namespace's entry                 |                              |
 * | seccomp        | the compiled filter (rewritten at each start)           |                              |
 * | network        | its network namespace's files, gate and stack           | stopped                      |
 * | cgroups        | its groups, with its limits                             | removed                      |
 * | bwrap          | the plan and bubblewrap's arguments                     |                              |
 * | launch         | bwrap, held at the gate                                 | killed, user networks told   |
 * | connect        | the stack and user networks plugged in, gate released   |                              |
 */
export const START_STAGES: readonly Stage<StartContext>[] = [
  networkTarget, rootfs, etc, user, tmpfs, userns, seccomp, network, cgroups, bwrap, launch, connect,
];
