import { spawn } from 'node:child_process';
import { closeSync, lstatSync, mkdirSync, openSync, readlinkSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { EngineError } from '../../../../engine-api/engine-error.js';
import { runOffLoop, type CommandResult } from '../../../linux/off-loop-command.js';
import { subordinateEntry, type Rootless } from '../rootless.js';
import { inMappedNamespace } from './enter-mapped.js';

/** How long a new namespace is waited for: 200 × 10 ms. */
const ATTEMPTS = 200;
const INTERVAL_MS = 10;

/** The server user's subordinate ranges (`/etc/subuid`, `/etc/subgid`): first host id of each, and how many (the smaller count). */
export interface SubordinateRange {
  uid: number;
  gid: number;
  count: number;
}

/** The server user's subordinate range, from its entries in both files; undefined when either has none. */
export function subordinateRange(user: Rootless, subuid = '/etc/subuid', subgid = '/etc/subgid'): SubordinateRange | undefined {
  const u = subordinateEntry(user, subuid)?.split(':');
  const g = subordinateEntry(user, subgid)?.split(':');
  if (!u || !g) return undefined;
  return { uid: Number(u[1]), gid: Number(g[1]), count: Math.min(Number(u[2]), Number(g[2])) };
}

/** The host tools a rootless launcher uses. */
export interface RootlessTools {
  unshare: string;
  nsenter: string;
  setpriv: string;
  newuidmap: string;
  newgidmap: string;
}

/**
 * The user namespace a rootless server runs its containers in, as rootless podman maps one:
 * container root is the server's own user, and container ids 1 to `count` are the user's
 * subordinate range (`/etc/subuid`, `/etc/subgid`), mapped by the setuid `newuidmap` and
 * `newgidmap` (the only programs that run as host root). A file of uid 1000 in an image, or
 * one a `-u 1000` container writes, belongs to host uid `start + 999`.
 *
 * Made once, on first use: util-linux `unshare --user` starts a process in a new namespace
 * (cat, waiting on a pipe), the two helpers map it, the server opens its namespace file and lets
 * the process go. Launchers reach it as `/proc/<server pid>/fd/<n>` and go in with nsenter as its
 * root (the server's own user, with every capability over the namespace's ids and nothing more).
 * It goes with the server, even on a crash.
 */
export class RootlessUserns {
  private namespace: Promise<number> | undefined;

  /** `stageDir`: an empty directory every mapped id may traverse, which launchers cover with their staging tmpfs (userns/enter.ts). */
  constructor(readonly user: Rootless, readonly range: SubordinateRange, readonly tools: RootlessTools, readonly stageDir: string) {}

  /**
   * The namespace for `user` on a server with a subordinate range; undefined without one (the
   * single-id mode: container root only). Makes the staging directory, `/tmp/dockgate-stage-<uid>`,
   * which must be the user's own directory (another user's, or a link, is refused).
   */
  static open(user: Rootless, tools: RootlessTools, range = subordinateRange(user)): RootlessUserns | undefined {
    if (!range) return undefined;
    const stageDir = `/tmp/dockgate-stage-${user.uid}`;
    mkdirSync(stageDir, { mode: 0o755, recursive: true });
    const info = lstatSync(stageDir);
    if (!info.isDirectory() || info.uid !== user.uid) throw new Error(`${stageDir} is not ${user.name}'s own directory: remove it and start again`);
    return new RootlessUserns(user, range, tools, stageDir);
  }

  /** How many container ids are mapped (0 to size - 1). */
  get size(): number {
    return this.range.count + 1;
  }

  /** The host uid and gid of container id `id` (root is the server's user). */
  hostIds(id: { uid: number; gid: number }): { uid: number; gid: number } {
    return {
      uid: id.uid === 0 ? this.user.uid : this.range.uid + id.uid - 1,
      gid: id.gid === 0 ? this.user.gid : this.range.gid + id.gid - 1,
    };
  }

  /** A host id back as the container's (the server's ids are root), for a commit's layer; undefined outside the map. */
  containerUid(host: number): number | undefined {
    if (host === this.user.uid) return 0;
    const n = host - this.range.uid + 1;
    return n >= 1 && n <= this.range.count ? n : undefined;
  }

  containerGid(host: number): number | undefined {
    if (host === this.user.gid) return 0;
    const n = host - this.range.gid + 1;
    return n >= 1 && n <= this.range.count ? n : undefined;
  }

  /** A 400 naming User when its uid or gid is beyond the mapped ids. */
  checkUser(user: { uid: number; gid: number }, spec: string): void {
    if (user.uid >= this.size || user.gid >= this.size) {
      throw EngineError.invalidParameter(`User "${spec}": ids above ${this.size - 1} are outside the container user namespace (the subordinate range of ${this.user.name} in /etc/subuid and /etc/subgid holds ${this.range.count} ids)`);
    }
  }

  /** The launcher transform for a container user (userns/enter-mapped.ts); the namespace is made on first use. */
  async enter(user: { uid: number; gid: number }): Promise<(bwrap: string, args: string[], argv: string[]) => [string, string[]]> {
    const file = await this.file();
    return (bwrap, args, argv) => inMappedNamespace({ ...this.tools, file, stageDir: this.stageDir }, bwrap, args, argv, user);
  }

  /** Runs `argv` as the namespace's root (copies and removals of trees holding files of its other ids), off the event loop. */
  async run(argv: readonly string[], input?: string): Promise<CommandResult> {
    const file = await this.file();
    return runOffLoop(this.tools.nsenter, [`--user=${file}`, '--setuid=0', '--setgid=0', '--', ...argv], input === undefined ? {} : { input });
  }

  /** `/proc/<server pid>/fd/<n>` of the namespace (made on first use), for host processes of the server's user: launchers, slirp4netns. */
  async file(): Promise<string> {
    this.namespace ??= this.create().catch((error: unknown) => {
      this.namespace = undefined;
      throw EngineError.system(`cannot make the rootless containers' user namespace: ${(error as Error).message}`, error);
    });
    return `/proc/${process.pid}/fd/${await this.namespace}`;
  }

  private async create(): Promise<number> {
    const holder = spawn(this.tools.unshare, ['--user', '--', 'cat'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    holder.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const failed = new Promise<never>((_resolve, reject) => {
      holder.on('error', reject);
      holder.on('exit', (code) => reject(new Error(`unshare --user exited with ${String(code)}: ${stderr.trim()}`)));
    });
    failed.catch(() => undefined);
    try {
      const pid = holder.pid;
      if (pid === undefined) return await failed;
      const own = readlinkSync('/proc/self/ns/user');
      for (let i = 0; ; i++) {
        const ns = nsOf(pid);
        if (ns !== own && ns !== '') break;
        if (i >= ATTEMPTS) throw new Error('unshare --user did not make a user namespace in time');
        await Promise.race([delay(INTERVAL_MS), failed]);
      }
      const { user, range } = this;
      await mapWith(this.tools.newuidmap, pid, user.uid, range.uid, range.count, '/etc/subuid');
      await mapWith(this.tools.newgidmap, pid, user.gid, range.gid, range.count, '/etc/subgid');
      return openSync(`/proc/${pid}/ns/user`, 'r');
    } finally {
      holder.stdin.end();
    }
  }

  /** Lets the namespace go (the containers in it keep it). */
  async close(): Promise<void> {
    const fd = await this.namespace?.catch(() => undefined);
    if (fd !== undefined) closeSync(fd);
    this.namespace = undefined;
  }
}

/** `newuidmap PID 0 OWN 1 1 START COUNT` (or newgidmap): container root onto the user's own id, 1 to COUNT onto the range. */
async function mapWith(tool: string, pid: number, own: number, start: number, count: number, file: string): Promise<void> {
  const done = await runOffLoop(tool, [String(pid), '0', String(own), '1', '1', String(start), String(count)]);
  if (done.code !== 0) throw new Error(`${tool} refused to map ${file}'s range (${start}, ${count} ids): ${done.stderr.trim() || `status ${String(done.code ?? done.signal)}`}`);
}

function nsOf(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/ns/user`);
  } catch {
    return '';
  }
}
