import { mkdtempSync, rmSync } from 'node:fs';
import { access, readlink, rm, writeFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../../engine-api/engine-error.js';
import { envRecord } from '../local/env-record.js';

/** The descriptor on which bwrap reads the container's environment (`--args`). */
export const ENV_ARGS_FD = 5;

/**
 * Shell that opens the file named by its first argument as {@link ENV_ARGS_FD} (bwrap reads it
 * from the descriptor and closes it before the command starts). Built-ins only: a launcher that
 * forked a helper (`rm`) would show a child that is not bwrap's, which an exec could take for
 * the container's pid 1. The server removes the file once it is open ({@link removeOnceOpened}).
 * 125 is dockerd's code for a container that could not be started.
 */
export const OPEN_ENV_ARGS = `exec ${ENV_ARGS_FD}<"$1" || exit 125; shift`;

let privateDir: string | undefined;

/**
 * Writes bwrap's arguments that give the sandboxed command exactly `entries` as its environment
 * (`--clearenv`, then `--setenv NAME VALUE` for each) to a new file only root can read, and
 * returns its path; the launcher passes it to bwrap as `--args` ({@link OPEN_ENV_ARGS}). A file,
 * not bwrap's command line: a command line is world-readable in /proc for as long as bwrap runs
 * (the container's whole life), and Env often holds passwords. `--setenv` takes any name, so
 * entries whose names are not shell identifiers (`spring.profiles.active=dev`) pass as they are.
 */
export async function writeEnvArgs(entries: readonly string[]): Promise<string> {
  // NUL separates bwrap's arguments in the file: one inside an entry would smuggle in options.
  const bad = entries.find((e) => e.includes('\0'));
  if (bad !== undefined) throw EngineError.invalidParameter(`Env entry "${bad.split('=')[0]!.replace(/\0/g, '\\0')}" contains a NUL byte`);
  const args = ['--clearenv'];
  for (const [name, value] of Object.entries(envRecord(entries))) args.push('--setenv', name, value);
  privateDir ??= mkdtempSync(join(tmpdir(), 'dockgate-env-'));
  const file = join(privateDir, `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  // Off the event loop: a file made and removed per start, on a disk every other process shares.
  await writeFile(file, `${args.join('\0')}\0`, { mode: 0o600, flag: 'wx' });
  return file;
}

/** Removes an environment file a launcher never opened (it failed to start). */
export function discardEnvArgs(file: string): void {
  rmSync(file, { force: true });
}

/** How long a launcher is given to open its environment file: 400 × 5 ms. */
const OPEN_POLLS = 400;

/**
 * For launchers the server spawns itself (a terminal's, an exec's); the command helper opens the
 * file for the launchers it spawns (off-loop-command.ts `argsFile`), with no polling.
 * Removes the environment file as soon as the launcher `pid` holds it open as
 * {@link ENV_ARGS_FD} (or has exited, or after two seconds): from then on only the descriptor
 * gives it, and bwrap closes that before the command runs.
 */
export async function removeOnceOpened(file: string, pid: number | undefined): Promise<void> {
  for (let i = 0; pid !== undefined && i < OPEN_POLLS; i++) {
    let target: string | undefined;
    try {
      target = await readlink(`/proc/${pid}/fd/${ENV_ARGS_FD}`);
    } catch {
      if (!(await access(`/proc/${pid}`).then(() => true, () => false))) break;
    }
    if (target !== undefined && target.startsWith(file)) break;
    await delay(5);
  }
  await rm(file, { force: true });
}
