import { launchSandbox } from '../sandbox-process.js';
import type { StartContext } from './start-context.js';
import type { Stage } from './stages.js';

/** Terminal size of a Tty container until the client's first resize (dockerd's default for a console). */
const DEFAULT_TTY = { rows: 24, cols: 80 };

/**
 * bwrap launched (sandbox-process.ts): in its groups from the first instruction, under its
 * filter, in its user namespace, its network's gate open, or in the joined container's network
 * namespace. Undone by killing it (it still waits at the gate: the command never runs) and
 * reporting its stop to the user networks it was attached to.
 */
export const launch: Stage<StartContext> = {
  name: 'launch',
  async run(ctx) {
    const { spec, argv, openStdin, tty, output } = ctx.run;
    const { group, seccompFile, enter, net, joined } = ctx;
    // Rootless with user networks: under the server's own user namespace (network/network-userns.ts),
    // unless the launcher enters a user namespace of the runtime itself (`enter`), below which the networks then live.
    const userns = enter ? undefined : await ctx.host.network.userns;
    ctx.proc = await launchSandbox({
      bwrap: ctx.host.bwrap,
      args: ctx.args,
      argv,
      env: ctx.env,
      openStdin,
      init: spec.host.init === true,
      // ConsoleSize when the client sent one, else 24x80.
      ...(tty ? { tty: spec.host.consoleSize ?? DEFAULT_TTY } : {}),
      output,
      ...(group ? { cgroupProcs: group.procs } : {}),
      ...(seccompFile ? { seccompFile } : {}),
      ...(enter ? { enter } : {}),
      ...(net ? { descriptors: net.gate.shell() } : {}),
      ...(joined ? { netns: `/proc/${joined.pid}/ns/net`, nsenter: ctx.host.hostTool('nsenter') } : {}),
      ...(userns ? { userns } : {}),
      // Rootless, `container:ID` also joins that container's user namespace, which owns its network
      // namespace: root of a sibling one would have no capability over it (no ping, no raw socket).
      ...(userns && joined ? { joinedUserns: `/proc/${joined.pid}/ns/user` } : {}),
      // Rootless with the runtime's own user namespace (`enter`): the joined network namespace is entered inside it.
      ...(enter && joined && ctx.host.network.rootless ? { netnsAfterUserns: true } : {}),
      // Rootless with Tmpfs mounts: launched inside the mount namespace that holds them (rootless-tmpfs.ts).
      ...(ctx.tmpfsNs ? { tmpfsNs: ctx.tmpfsNs, nsenter: ctx.host.hostTool('nsenter') } : {}),
    });
  },
  async undo(ctx) {
    ctx.proc.kill('SIGKILL');
    await ctx.proc.exited;
    await ctx.host.userNets?.stopped(ctx.run.id);
  },
};
