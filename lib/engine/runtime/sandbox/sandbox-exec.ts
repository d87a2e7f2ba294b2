import { readlinkSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../errors/engine-error.js';
import type { LocalExecProcess, LocalExecRun } from '../local/local-container.js';
import { descendants } from '../local/proc-stats.js';
import { spawnExec } from '../local/spawn-exec.js';
import type { ResolvedUser } from './passwd.js';

/**
 * `docker exec` in a sandbox container: util-linux `nsenter` joins every namespace of the
 * container's pid 1 (mount, PID, IPC, UTS, network, and user when the container has one), takes its root directory (the container's root
 * filesystem with its binds and tmpfs) and runs the command there as the exec's (else the
 * container's) user, names resolved in the container's /etc/passwd, in its working directory, with the container's environment
 * plus the exec's `Env`. The command is then a process of the container: `docker top` lists it,
 * `docker pause` freezes it, and it dies with the container's PID namespace.
 *
 * Known gap: an exec running as uid 0 has root's full capability set, not the container's
 * CapAdd/CapDrop set (nsenter cannot drop capabilities and no helper binary can be run from
 * inside the container's root); a non-zero uid has none, as in dockerd.
 */
export async function sandboxExec(run: LocalExecRun, nsenter: string, resolveUser: (spec: string) => ResolvedUser): Promise<LocalExecProcess> {
  if (run.privileged) throw EngineError.invalidParameter('Privileged is not supported by the sandbox runtime');
  const init = await containerInit(run);
  const spec = run.user !== '' ? run.user : typeof run.container.body.User === 'string' ? run.container.body.User : '';
  // Names resolve against the container's /etc/passwd and /etc/group, as runc does for dockerd's exec.
  const { uid, gid, home } = resolveUser(spec === '' ? '0' : spec);
  const env = run.env.some((e) => e.startsWith('HOME=')) ? run.env : [...run.env, `HOME=${home}`];
  const cwd = run.workingDir !== '' ? run.workingDir : (run.container.body.WorkingDir || '/');
  if (!cwd.startsWith('/')) throw EngineError.invalidParameter(`WorkingDir "${cwd}" must be an absolute path`);
  return spawnExec({
    file: nsenter,
    args: ['--target', String(init), '--all', '--root', `--wdns=${cwd}`, `--setuid=${uid}`, `--setgid=${gid}`, '--', ...run.argv],
    cwd: '/',
    env,
    tty: run.tty,
    stdin: run.stdin,
    ...(run.consoleSize ? { consoleSize: run.consoleSize } : {}),
    output: run.output,
  });
}

/**
 * The host pid of pid 1 of the container's PID namespace (the command under `--as-pid-1`, or
 * bubblewrap's init with Init). It is joined only once bubblewrap has finished building the
 * container (pid 1 no longer runs bwrap's code, or, with Init, the command below it exists):
 * an exec right after `docker run -d` must not land in a half-made container.
 */
async function containerInit(run: LocalExecRun): Promise<number> {
  const outer = run.container.process?.pid;
  for (let i = 0; outer && i < 200; i++) {
    const tree = descendants(outer);
    const pid1 = tree[0];
    if (pid1 !== undefined && (tree.length >= 2 || exe(pid1) !== exe(outer))) return pid1;
    await delay(10);
  }
  throw EngineError.conflict(`Container ${run.container.id} is not running`);
}

function exe(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return '';
  }
}
