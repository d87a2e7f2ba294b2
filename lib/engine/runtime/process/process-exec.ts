import { EngineError } from '../../../engine-api/engine-error.js';
import type { LocalExecProcess, LocalExecRun } from '../local/local-container.js';
import { spawnExec } from '../local/spawn-exec.js';
import { groupKiller, pipedProcess } from '../local/piped-process.js';
import { launchInGroup } from './process-cgroup.js';

/**
 * `docker exec` in an unconfined (process runtime) container: the container image's program,
 * like the container itself, with the exec's argv (argv[0] picks a multi-call binary's applet)
 * and the container's environment plus the exec's `Env`. What would need isolation (`User`,
 * `WorkingDir`, `Privileged`) is refused naming the field, as the container's create refuses it;
 * `Tty` delivers both streams raw on one stream, as the process runtime's containers do.
 */
export function processExec(run: LocalExecRun, program: string, cwd: string, groupProcs?: readonly string[]): Promise<LocalExecProcess> {
  for (const [field, set] of [['User', run.user !== ''], ['WorkingDir', run.workingDir !== ''], ['Privileged', run.privileged]] as const) {
    if (set) throw EngineError.invalidParameter(`${field} is not supported by the process runtime`);
  }
  const [argv0 = program, ...args] = run.argv;
  if (groupProcs !== undefined) {
    // In the container's cgroup: its kill and rm reach the exec's processes, setsid or not.
    const child = launchInGroup(groupProcs, { program, argv: [argv0, ...args], env: run.env, cwd, openStdin: run.stdin });
    return pipedProcess(child, (stream, data) => run.output(run.tty ? 1 : stream, data), () => ({ kill: groupKiller(child) }));
  }
  return spawnExec({
    file: program,
    args,
    argv0,
    cwd,
    env: run.env,
    tty: false,
    stdin: run.stdin,
    output: (_stream, data) => run.output(run.tty ? 1 : _stream, data),
  });
}
