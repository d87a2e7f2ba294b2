import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Cgroups, type ContainerCgroup } from '../../linux/cgroups.js';
import { LAUNCHER_ENV } from '../../linux/launcher-env.js';

/**
 * The launcher of a process-runtime container, in Perl (perl-base is part of every Debian
 * system): it writes its own pid into the container's `cgroup.procs` files, so the program and
 * everything it ever starts (a `setsid` child too) are in the group from their first
 * instruction; then reads the container's environment from descriptor 3 (NUL-separated
 * `NAME=value` entries), closes it, and execs the program with its argv[0]. The launcher itself
 * starts with a fixed environment: the container's reaches only the program. Node cannot exec
 * in place, and a shell can neither set argv[0] (dash) nor keep names that are not identifiers.
 * 125 is dockerd's code for a container that could not be started, 127 for a missing program.
 */
const LAUNCH = `
my $n = shift @ARGV;
for (1 .. $n) { my $f = shift @ARGV; open(my $h, '>', $f) or exit 125; print $h "$$\\n"; close($h) or exit 125; }
open(my $e, '<&=', 3) or exit 125;
my $data = do { local $/; <$e> };
close($e);
%ENV = ();
for my $kv (split /\\0/, $data // '') { my ($k, $v) = split /=/, $kv, 2; $ENV{$k} = $v // '' if $k ne ''; }
my $program = shift @ARGV;
exec { $program } @ARGV or do { print STDERR "exec $program: $!\\n"; exit 127 };
`;

const PERL = '/usr/bin/perl';

/** How many rounds of SIGKILL a kill of the whole group takes at most (a fork can race the first). */
const KILL_ROUNDS = 20;

/** What a tracked spawn needs. */
export interface TrackedSpawn {
  id: string;
  program: string;
  argv: readonly string[];
  env: readonly string[];
  cwd: string;
  openStdin: boolean;
}

/**
 * Each process-runtime container in a cgroup v1 pids group of its own (`…/dockgate/<id>`, made
 * by linux/cgroups.ts), with a pids limit. The group, not the process tree or the process group,
 * is what kill and rm reach: a child that calls setsid leaves its process group and, when its
 * parent exits, the tree, but never its cgroup.
 */
export class ProcessTracker {
  private constructor(private readonly cgroups: Cgroups, readonly pidsLimit: number) {}

  /** Finds the pids hierarchy; undefined when this server cannot manage it (not root, cgroup v2). */
  static detect(pidsLimit: number): ProcessTracker | undefined {
    const cgroups = Cgroups.detect();
    return cgroups.controllers.includes('pids') ? new ProcessTracker(cgroups, pidsLimit) : undefined;
  }

  /** Starts the program inside a new group; the child is the launcher that becomes the program. */
  spawn(run: TrackedSpawn): { child: ChildProcess; group: ContainerCgroup } {
    const group = this.cgroups.create(run.id, { pids: this.pidsLimit });
    try {
      return { child: launchInGroup(group.procs, run), group };
    } catch (error) {
      void group.remove();
      throw error;
    }
  }
}

/**
 * Starts `run.program` through the launcher inside existing groups (a container's, for its
 * execs: dockerd puts an exec in the container's cgroup, and so kill and rm reach it).
 */
export function launchInGroup(procs: readonly string[], run: Omit<TrackedSpawn, 'id'>): ChildProcess {
  const child = spawn(PERL, ['-e', LAUNCH, String(procs.length), ...procs, run.program, ...run.argv], {
    cwd: run.cwd,
    env: { ...LAUNCHER_ENV },
    stdio: [run.openStdin ? 'pipe' : 'ignore', 'pipe', 'pipe', 'pipe'],
    // Its own process group too, so a signal other than SIGKILL reaches what it started.
    detached: true,
  });
  const envPipe = child.stdio[3] as Writable | null;
  envPipe?.on('error', () => undefined);
  envPipe?.end(run.env.map((e) => `${e}\0`).join(''));
  return child;
}

/**
 * SIGKILLs every process of the group until none is left (or a few rounds have passed), and the
 * launcher itself, which may not have joined the group yet.
 */
export async function killGroup(group: ContainerCgroup, launcher: ChildProcess): Promise<void> {
  // Once reaped (exitCode or signalCode set), its pid may be another process's: left alone.
  if (launcher.exitCode === null && launcher.signalCode === null) tryKill(launcher.pid);
  for (let round = 0; round < KILL_ROUNDS; round++) {
    const pids = group.pids();
    if (pids.length === 0) return;
    for (const pid of pids) tryKill(pid);
    await delay(10);
  }
}

/** Waits (a few seconds at most) until the launcher has written itself into the group, or has exited. */
export async function joined(group: ContainerCgroup, launcher: ChildProcess): Promise<void> {
  for (let i = 0; i < JOIN_POLLS; i++) {
    if (launcher.exitCode !== null || launcher.signalCode !== null || group.pids().includes(launcher.pid ?? -1)) return;
    await delay(5);
  }
}

const JOIN_POLLS = 600;

function tryKill(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}
