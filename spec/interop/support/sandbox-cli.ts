import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { program, type PeerCheck } from '../../support/peers.js';
import type { SandboxRuntimeOptions } from '../../../lib/engine/runtime/sandbox/index.js';
import { sandboxServer } from './engine-user.js';
import { DOCKER_CLI } from './docker-cli.js';

const hasBwrap = spawnSync('bwrap', ['--version']).status === 0 && existsSync('/bin/busybox');

/** The peers a sandbox escape spec drives: Docker CLI 28, bubblewrap and a static busybox. */
export const SANDBOX_PEERS: PeerCheck[] = [
  program(DOCKER_CLI),
  { name: 'bwrap (Debian bubblewrap) and /bin/busybox (busybox-static)', available: () => hasBwrap },
];

/** cgroup v1 memory, cpu and pids hierarchies this process may create groups in (root, as in CI). */
export const CGROUPS_V1: PeerCheck = {
  name: 'cgroup v1 memory, cpu and pids controllers (root)',
  available: () => process.getuid?.() === 0 && ['memory', 'cpu', 'pids'].every((c) => readFileSync('/proc/self/cgroup', 'utf8').split('\n').some((l) => l.split(':')[1]?.split(',').includes(c))),
};

export interface CliResult { code: number; stdout: string; stderr: string }

/** A sandbox runtime served on a socket, and the Docker CLI pointed at it. */
export interface SandboxCli {
  cli(...args: string[]): Promise<CliResult>;
  /** `docker` with data on its stdin. */
  cliWithInput(input: Buffer, ...args: string[]): Promise<CliResult>;
  /** The socket the runtime listens on (for SDK clients). */
  socket(): Promise<string>;
  close(): Promise<void>;
}

/** Starts a sandbox runtime (when the peers are there) with `options`, behind a Unix socket. */
export function sandboxCli(options: SandboxRuntimeOptions = {}): SandboxCli {
  // In the rootless pass (DOCKGATE_ENGINE_USER), a process of that user (engine-user.ts).
  const listening = hasBwrap ? sandboxServer(options) : undefined;
  listening?.catch(() => undefined);
  const configDir = mkdtempSync(join(tmpdir(), 'dockgate-cli-'));
  const run = async (args: string[], input?: Buffer): Promise<CliResult> => {
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', DOCKER_HOST: `unix://${(await listening)!.socket}`, DOCKER_CONFIG: configDir };
    return new Promise((resolve) => {
      const child = execFile(DOCKER_CLI, args, { env, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
      if (input) child.stdin!.end(input);
    });
  };
  return {
    cli: (...args) => run(args),
    cliWithInput: (input, ...args) => run(args, input),
    socket: async () => (await listening)!.socket,
    close: async () => {
      await (await listening)?.close();
    },
  };
}
