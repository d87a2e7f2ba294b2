import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { readFileSync } from 'node:fs';
import { Cgroups } from '../engine/linux/cgroups.js';
import { detectV2, v2DelegationCommand, v2Summary } from '../engine/linux/cgroup-v2.js';
import { UsageError, type CliIo } from './io.js';

export const rootlessCgroupsHelp = `Usage: dockgate rootless-cgroups [--user NAME]

Prints the one command an administrator runs (as root) to delegate the cgroup v1 groups a
rootless sandbox runtime started from this shell would use (memory, cpu, cpuset, pids) to NAME
(default: the current user), so that --memory, --cpus and --pids-limit are enforced instead of
refused. The groups are the "dockgate" groups under this process's own groups: run it from the
same service or session the server runs in.

On a cgroup v2 host (systemd), it prints what is delegated to NAME's user@UID.service (or the
server's own unit) and the command that delegates memory, pids, cpu and cpuset there (a
Delegate= drop-in); the sandbox runtime still sets limits through cgroup v1 groups only.
`;

/** `dockgate rootless-cgroups`: prints the delegation command (cgroup v1). */
export async function rootlessCgroups(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args, options: { user: { type: 'string' } }, strict: true });
  const user = values.user ?? userInfo().username;
  if (!/^[a-z_][a-z0-9_.-]*\$?$/i.test(user)) throw new UsageError(`--user "${user}" is not a user name`);
  const v2 = detectV2(uidOf(user));
  if (v2) {
    const command = v2DelegationCommand(v2, uidOf(user));
    io.stderr(`${v2Summary(v2)}; the sandbox runtime sets limits through cgroup v1 groups only, so on this host they stay refused\n`);
    if (command) io.stdout(`${command}\n`);
    return 0;
  }
  const dirs = [...Cgroups.groups().values()];
  if (dirs.length === 0) {
    io.stderr('no cgroup v1 controller (memory, cpu, cpuset, pids) is mounted here, and no cgroup v2 hierarchy: nothing to delegate\n');
    return 1;
  }
  const list = dirs.join(' ');
  io.stdout(`sudo sh -c 'mkdir -p ${list} && chown -R ${user} ${list}'\n`);
  return 0;
}

/** NAME's uid from /etc/passwd (the current user's when it is not there). */
function uidOf(name: string): number {
  const line = (readFileSync('/etc/passwd', 'utf8').split('\n')).find((l) => l.split(':')[0] === name);
  const uid = Number(line?.split(':')[2]);
  return Number.isSafeInteger(uid) ? uid : (process.getuid?.() ?? 0);
}
