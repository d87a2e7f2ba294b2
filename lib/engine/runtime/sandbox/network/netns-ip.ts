import { spawn } from 'node:child_process';

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
export function ipIn(tools: NetnsTools, pid: number, commands: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(tools.nsenter, [`--net=/proc/${pid}/ns/net`, '--', tools.ip, '-batch', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => {
      if (errors.length < 2048) errors += chunk.toString('utf8');
    });
    child.once('error', (error) => reject(new Error(`cannot run ${tools.ip}: ${error.message}`)));
    child.once('close', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`ip in the network namespace of ${pid}: ${errors.trim().split('\n').slice(-2).join('; ') || `status ${String(code)}`}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(commands.join('\n') + '\n');
  });
}
