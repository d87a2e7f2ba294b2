import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runProgram, type ProgramResult, type RunOptions } from './run-program.js';

/** Docker CLI 28; Debian's docker.io puts an older CLI in /usr/bin. */
export const DOCKER_CLI = '/usr/local/bin/docker';

/**
 * The Docker CLI pointed at one engine socket per call, with only PATH, HOME, DOCKER_HOST and
 * DOCKER_CONFIG in its environment (nothing of the caller's DOCKER_* leaks in).
 *
 * @example
 * const docker = dockerAt(configDir);
 * const { code, stdout } = await docker(socket, ['ps', '-a']);
 */
export function dockerAt(configDir: string, home = process.env.HOME ?? '/tmp'): (socket: string, args: readonly string[], input?: string | Buffer) => Promise<ProgramResult> {
  return (socket, args, input) => runProgram(DOCKER_CLI, args, {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, DOCKER_HOST: `unix://${socket}`, DOCKER_CONFIG: configDir },
    inheritEnv: false,
    ...(input !== undefined ? { input } : {}),
  });
}

/** What `docker login` leaves in config.json for one registry. */
export interface DockerAuthEntry {
  auth?: string;
  identitytoken?: string;
}

/** A Docker CLI bound to its own temporary DOCKER_CONFIG directory. */
export interface DockerCli {
  /** The temporary DOCKER_CONFIG directory. */
  readonly configDir: string;
  /** Runs `docker ARGS` with DOCKER_CONFIG set to {@link configDir}. */
  docker(args: readonly string[], options?: RunOptions): Promise<ProgramResult>;
  /** The parsed config.json (`{}` when the CLI has not written one yet). */
  readConfig(): Promise<{ auths?: Record<string, DockerAuthEntry> }>;
  /** The config.json text, to check what was (not) stored. */
  readConfigText(): Promise<string>;
  /** Removes the temporary directory. */
  dispose(): Promise<void>;
}

/**
 * A Docker CLI whose credentials live in a fresh temporary DOCKER_CONFIG, so `docker login` in a
 * spec never touches the user's ~/.docker/config.json (and no credential helper configured there
 * is used).
 *
 * @example
 * const cli = await dockerCli();
 * await cli.docker(['login', host, '-u', 'alice', '--password-stdin'], { input: 'pw' });
 * await cli.dispose();
 */
export async function dockerCli(): Promise<DockerCli> {
  const configDir = await mkdtemp(join(tmpdir(), 'dockgate-docker-config-'));
  const configFile = join(configDir, 'config.json');
  const readConfigText = async () => {
    try {
      return await readFile(configFile, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '{}';
      throw err;
    }
  };
  return {
    configDir,
    docker: (args, options = {}) => runProgram(DOCKER_CLI, args, {
      ...options,
      env: { ...options.env, DOCKER_CONFIG: configDir, DOCKER_CLI_HINTS: 'false' },
    }),
    readConfig: async () => JSON.parse(await readConfigText()) as { auths?: Record<string, DockerAuthEntry> },
    readConfigText,
    dispose: () => rm(configDir, { recursive: true, force: true }),
  };
}
