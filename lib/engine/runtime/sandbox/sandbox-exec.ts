import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../errors/engine-error.js';
import type { LocalExecProcess, LocalExecRun } from '../local/local-container.js';
import { descendants } from '../local/proc-stats.js';
import { spawnExec } from '../local/spawn-exec.js';

/**
 * `docker exec` in a sandbox container: util-linux `nsenter` joins every namespace of the
 * container's pid 1 (bubblewrap's init inside the PID namespace: mount, PID, IPC, UTS, network,
 * and user when the container has one), takes its root directory (the container's root
 * filesystem with its binds and tmpfs) and runs the command there as the exec's (else the
 * container's) numeric uid:gid, in its working directory, with the container's environment
 * plus the exec's `Env`. The command is then a process of the container: `docker top` lists it,
 * `docker pause` freezes it, and it dies with the container's PID namespace.
 *
 * Known gap: an exec running as uid 0 has root's full capability set, not the container's
 * CapAdd/CapDrop set (nsenter cannot drop capabilities and no helper binary can be run from
 * inside the container's root); a non-zero uid has none, as in dockerd.
 */
export async function sandboxExec(run: LocalExecRun, nsenter = 'nsenter'): Promise<LocalExecProcess> {
  if (run.privileged) throw EngineError.invalidParameter('Privileged is not supported by the sandbox runtime');
  const init = await containerInit(run);
  const user = run.user !== '' ? run.user : (run.container.body.User ?? '');
  const [uid, gid] = parseUser(user);
  const cwd = run.workingDir !== '' ? run.workingDir : (run.container.body.WorkingDir || '/');
  if (!cwd.startsWith('/')) throw EngineError.invalidParameter(`WorkingDir "${cwd}" must be an absolute path`);
  return spawnExec({
    file: nsenter,
    args: ['--target', String(init), '--all', '--root', `--wdns=${cwd}`, `--setuid=${uid}`, `--setgid=${gid}`, '--', ...run.argv],
    cwd: '/',
    env: run.env,
    tty: run.tty,
    stdin: run.stdin,
    ...(run.consoleSize ? { consoleSize: run.consoleSize } : {}),
    output: run.output,
  });
}

/**
 * The host pid of bubblewrap's init inside the container. It is joined only once the container's
 * command (its child, pid 2) exists: before that bubblewrap may still be building the root, and
 * an exec right after `docker run -d` would land in a half-made container.
 */
async function containerInit(run: LocalExecRun): Promise<number> {
  const outer = run.container.process?.pid;
  for (let i = 0; outer && i < 200; i++) {
    const tree = descendants(outer);
    if (tree.length >= 2) return tree[0]!;
    await delay(10);
  }
  throw EngineError.conflict(`Container ${run.container.id} is not running`);
}

/** Numeric `uid[:gid]` or `root`, as the sandbox takes for containers; `-u 1000` means gid 0, as in dockerd. */
function parseUser(user: string): [string, string] {
  if (user === '' || user === 'root') return ['0', '0'];
  const m = /^(\d+)(?::(\d+))?$/.exec(user);
  if (!m) throw EngineError.invalidParameter(`User "${user}": the sandbox runtime accepts only numeric uid[:gid] or root`);
  return [m[1]!, m[2] ?? '0'];
}
