import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { Cgroups } from '../engine/linux/cgroups.js';
import { UsageError, type CliIo } from './io.js';

export const rootlessCgroupsHelp = `Usage: dockgate rootless-cgroups [--user NAME]

Prints the one command an administrator runs (as root) to delegate the cgroup v1 groups a
rootless sandbox runtime started from this shell would use (memory, cpu, cpuset, pids) to NAME
(default: the current user), so that --memory, --cpus and --pids-limit are enforced instead of
refused. The groups are the "dockgate" groups under this process's own groups: run it from the
same service or session the server runs in.
`;

/** `dockgate rootless-cgroups`: prints the delegation command (cgroup v1). */
export async function rootlessCgroups(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { user: { type: 'string' } }, strict: true });
  const user = values.user ?? userInfo().username;
  if (!/^[a-z_][a-z0-9_.-]*\$?$/i.test(user)) throw new UsageError(`--user "${user}" is not a user name`);
  const dirs = [...Cgroups.groups().values()];
  if (dirs.length === 0) {
    io.stderr('no cgroup v1 controller (memory, cpu, cpuset, pids) is mounted here: nothing to delegate (cgroup v2 is not handled)\n');
    return 1;
  }
  const list = dirs.join(' ');
  io.stdout(`sudo sh -c 'mkdir -p ${list} && chown -R ${user} ${list}'\n`);
  return 0;
}
