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

/**
 * Runs several callers' iproute2 commands in the network namespace of `pid` with one process
 * (`ip -force -batch`: a failed line does not stop the rest), entered as {@link ipIn} enters it: one entry per group, undefined when
 * all of the group's lines succeeded, else an error with ip's words for its first failed line.
 * Rejects only when nothing could be run.
 */
export async function ipGroupsIn(tools: NetnsTools, pid: number, groups: readonly string[][]): Promise<(Error | undefined)[]> {
  let result;
  try {
    const userns = tools.userns ? (await tools.userns).enterArgs() : [];
    result = await runOffLoop(tools.nsenter, [...userns, `--net=/proc/${pid}/ns/net`, '--', tools.ip, '-force', '-batch', '-'], { input: groups.flat().join('\n') + '\n' });
  } catch (error) {
    throw new Error(`cannot run ${tools.ip}: ${(error as Error).message}`);
  }
  const errors: (Error | undefined)[] = groups.map(() => undefined);
  if (result.code === 0) return errors;
  // ip writes its own words, then `Command failed -:N` (N: the input's line, from 1) for each failed line.
  const lastLine = groups.reduce<number[]>((ends, g) => [...ends, (ends.at(-1) ?? 0) + g.length], []);
  let words: string[] = [];
  let found = false;
  for (const line of result.stderr.split('\n')) {
    const failed = /^Command failed -:(\d+)$/.exec(line);
    if (!failed) {
      if (line.trim() !== '') words.push(line.trim());
      continue;
    }
    const group = lastLine.findIndex((end) => Number(failed[1]) <= end);
    if (group >= 0 && errors[group] === undefined) errors[group] = new Error(`ip in the network namespace of ${pid}: ${words.slice(-2).join('; ') || 'failed'}`);
    found = true;
    words = [];
  }
  if (!found) {
    const error = new Error(`ip in the network namespace of ${pid}: ${result.stderr.trim().split('\n').slice(-2).join('; ') || `status ${String(result.code ?? result.signal)}`}`);
    return groups.map(() => error);
  }
  return errors;
}
