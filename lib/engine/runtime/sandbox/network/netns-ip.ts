import { runOffLoop } from '../../../linux/off-loop-command.js';
import type { NetworkUserns } from './network-userns.js';

/** The host tools the networks use, found once by the runtime. */
export interface NetnsTools {
  /** util-linux's nsenter. */
  nsenter: string;
  /** iproute2's ip. */
  ip: string;
  /** A rootless server's own user namespace (network-userns.ts), which `ip` joins first; none: host root's. */
  userns?: Promise<NetworkUserns>;
}

/**
 * Runs iproute2 commands (one per line, `ip -batch`) in the network namespace of `pid`, entered
 * by path with nsenter (only the network namespace: a container's user namespace would leave host
 * root no capability there; rootless, the server's own user namespace first, where it has them).
 * Rejects with ip's own words when a command fails.
 */
export async function ipIn(tools: NetnsTools, pid: number, commands: string[]): Promise<void> {
  let result;
  try {
    const userns = tools.userns ? (await tools.userns).enterArgs() : [];
    result = await runOffLoop(tools.nsenter, [...userns, `--net=/proc/${pid}/ns/net`, '--', tools.ip, '-batch', '-'], { input: commands.join('\n') + '\n' });
  } catch (error) {
    throw new Error(`cannot run ${tools.ip}: ${(error as Error).message}`);
  }
  if (result.code === 0) return;
  const errors = result.stderr.slice(0, 2048);
  throw new Error(`ip in the network namespace of ${pid}: ${errors.trim().split('\n').slice(-2).join('; ') || `status ${String(result.code ?? result.signal)}`}`);
}
