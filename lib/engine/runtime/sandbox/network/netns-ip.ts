import { runOffLoop } from '../../../linux/off-loop-command.js';

/** The host tools the networks use, found once by the runtime. */
export interface NetnsTools {
  /** util-linux's nsenter. */
  nsenter: string;
  /** iproute2's ip. */
  ip: string;
}

/**
 * Runs iproute2 commands (one per line, `ip -batch`) in the network namespace of `pid`, entered
 * by path with nsenter (only the network namespace: a container's user namespace would leave host
 * root no capability there). Rejects with ip's own words when a command fails.
 */
export async function ipIn(tools: NetnsTools, pid: number, commands: string[]): Promise<void> {
  let result;
  try {
    result = await runOffLoop(tools.nsenter, [`--net=/proc/${pid}/ns/net`, '--', tools.ip, '-batch', '-'], { input: commands.join('\n') + '\n' });
  } catch (error) {
    throw new Error(`cannot run ${tools.ip}: ${(error as Error).message}`);
  }
  if (result.code === 0) return;
  const errors = result.stderr.slice(0, 2048);
  throw new Error(`ip in the network namespace of ${pid}: ${errors.trim().split('\n').slice(-2).join('; ') || `status ${String(result.code ?? result.signal)}`}`);
}
