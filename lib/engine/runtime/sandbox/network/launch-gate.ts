import { closeSync, constants, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Socket } from 'node:net';
import { runOffLoop } from '../../../linux/off-loop-command.js';

/** read(2)'s number on the architectures whose /proc/PID/syscall the gate can read. */
const READ_SYSCALL: Partial<Record<string, number>> = { x64: 0, arm64: 63 };

/** How long the gate waits for bwrap to finish building the container. */
const GATE_TIMEOUT_MS = 10_000;

/**
 * Holds a container's command until its network is up. bwrap writes its child's pid (pid 1 of
 * the container, already in its new network namespace) as JSON to `--info-fd`, and the child
 * waits on `--block-fd` for one byte before it goes on to the command. Both descriptors are
 * FIFOs that the launcher shell opens (read-write, so neither open blocks): node-pty, which
 * starts a Tty container, passes no descriptors beyond the terminal, so pipes cannot carry them
 * on both launch paths. bwrap closes both before the command runs: the container has neither.
 */
export class LaunchGate {
  private readonly reported: Promise<number>;
  private readonly reader: Socket;

  private constructor(private readonly info: string, private readonly block: string) {
    // Opened now, before bwrap runs, and read-write: a FIFO drops what was written to it once
    // its last descriptor closes, and bwrap closes its own right after writing. Read-write also
    // keeps the open from blocking (a read-only one waits for a writer). A Socket reads it on the
    // event loop.
    this.reader = new Socket({ fd: openSync(info, constants.O_RDWR | constants.O_NONBLOCK), readable: true, writable: false });
    this.reported = new Promise<number>((resolve, reject) => {
      let text = '';
      this.reader.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        const pid = /"child-pid"\s*:\s*(\d+)/.exec(text);
        if (pid) resolve(Number(pid[1]));
        else if (text.length > 4096) reject(new Error('bwrap wrote no child pid on its info descriptor'));
      });
      this.reader.on('error', reject);
    });
    this.reported.catch(() => undefined);
  }

  /**
   * Takes two spare FIFOs (mode 0600, {@link spareFifos}) and renames them to `<base>.info` and
   * `<base>.block` (in the same directory), and starts listening on the first.
   */
  static async create(base: string): Promise<LaunchGate> {
    for (let attempt = 0; ; attempt++) {
      const [info, block] = await spareFifos(dirname(base));
      try {
        await rename(info, `${base}.info`);
        await rename(block, `${base}.block`);
        return new LaunchGate(`${base}.info`, `${base}.block`);
      } catch (error) {
        await Promise.all([info, block, `${base}.info`].map((f) => rm(f, { force: true })));
        // The spares are gone (the run directory was emptied or made again): made anew, once.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || attempt > 0) throw error;
        spares.delete(dirname(base));
      }
    }
  }

  /** The launcher script that opens the FIFOs as fds 3 and 4 (its first two arguments), and their paths. */
  shell(): { script: string; args: string[] } {
    return { script: 'exec 3<>"$1" 4<>"$2" || exit 125; shift 2', args: [this.info, this.block] };
  }

  /** bwrap's options that use them. */
  bwrapArgs(): string[] {
    return ['--info-fd', '3', '--block-fd', '4'];
  }

  /**
   * The host pid of the container's first process, once bwrap reports it; undefined when bwrap
   * ends first (`ended`), having failed before it made the container.
   */
  async childPid(ended: Promise<unknown>): Promise<number | undefined> {
    let gone = false;
    const end = ended.then(() => undefined, () => undefined).finally(() => {
      gone = true;
    });
    let pid;
    try {
      pid = await Promise.race([this.reported, end]);
    } finally {
      this.reader.destroy();
    }
    if (pid === undefined) return undefined;
    return (await atGate(pid, () => gone)) ? pid : undefined;
  }

  /** Lets the command run (one byte on the block FIFO), then removes the FIFOs. */
  release(): void {
    try {
      // Non-blocking: bwrap holds the read end; if it is gone, there is nothing to release.
      const fd = openSync(this.block, constants.O_WRONLY | constants.O_NONBLOCK);
      try {
        writeSync(fd, '1');
      } finally {
        closeSync(fd);
      }
    } catch {
      // bwrap ended meanwhile: its exit is on its way.
    }
    this.remove();
  }

  /** Removes the FIFOs (a container that did not start). */
  remove(): void {
    this.reader.destroy();
    rmSync(this.info, { force: true });
    rmSync(this.block, { force: true });
  }
}

/** FIFOs one `mkfifo` makes ahead in a run directory: a burst of 16 starts takes one process, not 16. */
const SPARES = 32;

/** Spare FIFOs by run directory, and the `mkfifo` under way there. */
const spares = new Map<string, { names: string[]; making?: Promise<void>; swept?: boolean }>();

/**
 * Two new FIFOs in `dir`, from the spares; when fewer than two are left, one `mkfifo` (off the
 * event loop: Node has no mkfifo(3)) makes {@link SPARES} more, shared by every start waiting
 * then. Spares are named `.spare-…`; the first batch in a directory first removes those a
 * previous server left there.
 */
async function spareFifos(dir: string): Promise<[string, string]> {
  let pool = spares.get(dir);
  if (!pool) spares.set(dir, (pool = { names: [] }));
  while (pool.names.length < 2) {
    const p = pool;
    p.making ??= makeSpares(dir, p).finally(() => {
      p.making = undefined;
    });
    await p.making;
  }
  return [pool.names.pop()!, pool.names.pop()!];
}

async function makeSpares(dir: string, pool: { names: string[]; swept?: boolean }): Promise<void> {
  if (!pool.swept) {
    const left = (await readdir(dir).catch(() => [] as string[])).filter((name) => name.startsWith('.spare-'));
    await Promise.all(left.map((name) => rm(join(dir, name), { force: true })));
    pool.swept = true;
  }
  const stamp = `${process.pid}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  const names = Array.from({ length: SPARES }, (_, i) => join(dir, `.spare-${stamp}-${i}`));
  const made = await runOffLoop('mkfifo', ['-m', '0600', ...names]);
  if (made.code !== 0) {
    await Promise.all(names.map((name) => rm(name, { force: true })));
    throw new Error(`mkfifo ${basename(names[0]!)}: ${made.stderr.trim() || `status ${String(made.code ?? made.signal)}`}`);
  }
  pool.names.push(...names);
}

/**
 * Waits until bwrap's child blocks on the gate (a read of fd 4, as /proc/PID/syscall shows it):
 * by then it has built the container, its loopback included. The stack must not configure the
 * namespace before: bwrap's own netlink requests for `lo` fail when slirp4netns's run at the
 * same moment ("loopback: Failed RTM_NEWADDR"). False when the child is gone meanwhile. Where
 * the file cannot be read (another architecture), the stack waits for `lo` to be up instead
 * (its ::1 address in /proc/PID/net/if_inet6), or for 50 ms where the host has no IPv6.
 */
async function atGate(pid: number, gone: () => boolean): Promise<boolean> {
  const read = READ_SYSCALL[process.arch];
  const started = Date.now();
  for (let wait = 0; Date.now() - started < GATE_TIMEOUT_MS; wait = Math.min(wait + 1, 5)) {
    if (gone()) return false;
    let line: string;
    try {
      line = read === undefined ? '' : readFileSync(`/proc/${pid}/syscall`, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH') return false;
      line = '';
    }
    if (line !== '') {
      const [nr, fd] = line.split(' ');
      if (Number(nr) === read && fd === '0x4') return true;
    } else if (loopbackUp(pid) ?? Date.now() - started > 50) {
      return true;
    }
    await delay(wait);
  }
  throw new Error(`bwrap did not finish building the container in ${GATE_TIMEOUT_MS / 1000}s`);
}

/** Whether `lo` has ::1 in the namespace of `pid`; undefined without IPv6. */
function loopbackUp(pid: number): boolean | undefined {
  try {
    return /\slo\n/.test(readFileSync(`/proc/${pid}/net/if_inet6`, 'utf8'));
  } catch {
    return undefined;
  }
}
