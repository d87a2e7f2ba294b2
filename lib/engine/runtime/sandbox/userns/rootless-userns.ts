import { spawn } from 'node:child_process';
import { closeSync, lstatSync, mkdirSync, readlinkSync } from 'node:fs';
import { EngineError } from '../../../../engine-api/engine-error.js';
import { runOffLoop, type CommandResult } from '../../../linux/off-loop-command.js';
import { subordinateEntry, type Rootless } from '../rootless.js';
import { ownerOf } from '../../../policy/owner-label.js';
import { inMappedNamespace, type MappedTools } from './enter-mapped.js';
import { execInMappedNamespace } from './exec-mapped.js';
import { OwnerRanges } from './owner-ranges.js';
import { holdUserNamespace } from './held-namespace.js';

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

/** The program that runs an exec's `bwrap args -- argv` as `user` in the container whose pid 1 is `init` (a non-root container user, rootless). */
export type MappedExec = (init: number, bwrap: string, args: string[], argv: string[], user: { uid: number; gid: number }) => [string, string[]];

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
 *
 * Owners' ranges (the tenant-isolation rule): the subordinate range is cut into blocks of
 * `size - 1` ids, and each owner (a container's `dockgate.owner` label; none: the first block)
 * runs in a namespace of its own, a child of the full one, mapping container root onto the
 * server's user and container ids 1 to `size - 1` onto its block: one tenant's non-root users
 * are host ids no other tenant's container maps. Root is the server's user in every one of them,
 * as rootless podman's containers share it. The blocks are assigned in the order owners are
 * first seen and kept in `owner-ranges.json` (owner-ranges.ts); an owner beyond what the range
 * holds is refused, naming the file to widen.
 */
export class RootlessUserns {
  private namespace: Promise<number> | undefined;
  /** Each owner's namespace (its file descriptor), by block index, made on first use. */
  private readonly children = new Map<number, Promise<number>>();
  private readonly owners: OwnerRanges;
  /** Container ids each namespace maps (0 to size - 1). */
  readonly size: number;

  /**
   * `stageDir`: an empty directory every mapped id may traverse, which launchers cover with their
   * staging tmpfs (userns/enter.ts); `rangesFile`: where owners' blocks are kept; `size`: container
   * ids per owner (default: the whole range, for containers without an owner).
   */
  constructor(readonly user: Rootless, readonly range: SubordinateRange, readonly tools: RootlessTools, readonly stageDir: string, rangesFile: string, size?: number) {
    this.size = Math.min(size ?? range.count + 1, range.count + 1);
    this.owners = new OwnerRanges(rangesFile);
  }

  /**
   * The namespace for `user` on a server with a subordinate range; undefined without one (the
   * single-id mode: container root only). Makes the staging directory, `/tmp/dockgate-stage-<uid>`,
   * which must be the user's own directory (another user's, or a link, is refused).
   */
  static open(user: Rootless, tools: RootlessTools, rangesFile: string, size?: number, range = subordinateRange(user)): RootlessUserns | undefined {
    if (!range) return undefined;
    const stageDir = `/tmp/dockgate-stage-${user.uid}`;
    mkdirSync(stageDir, { mode: 0o755, recursive: true });
    const info = lstatSync(stageDir);
    if (!info.isDirectory() || info.uid !== user.uid) throw new Error(`${stageDir} is not ${user.name}'s own directory: remove it and start again`);
    return new RootlessUserns(user, range, tools, stageDir, rangesFile, size);
  }

  /** How many owners' blocks the range holds (one at least). */
  get blocks(): number {
    return Math.max(1, Math.floor(this.range.count / (this.size - 1)));
  }

  /**
   * The block of a container with these labels: its owner's, assigned at the owner's first
   * container. An owner beyond what the range holds is a 409 naming what widens it, never another owner's block.
   */
  indexOf(labels: unknown): number {
    const owner = ownerOf(labels);
    const index = this.owners.indexOf(owner);
    if (index >= this.blocks) {
      const { uid, count } = this.range;
      throw EngineError.conflict(`no subordinate id range left for owner ${owner ?? '(none)'}: ${this.user.name}'s range in /etc/subuid (host uids ${uid}-${uid + count - 1}) holds ${this.blocks} ranges of ${this.size} container ids (root is ${this.user.name}), one per owner and one for containers without an owner; widen ${this.user.name}'s range in /etc/subuid and /etc/subgid or lower the sandbox option userns.size`);
    }
    return index;
  }

  /** Where block `index` starts among the full namespace's ids (container id n ≥ 1 is that plus n). */
  private offset(index: number): number {
    return index * (this.size - 1);
  }

  /** {@link offset}, for a reader in the full namespace (ns-reader.ts). */
  offsetOf(index: number): number {
    return this.offset(index);
  }

  /** Block `index` as host ids: those of its container id 1, and its size (a container's copy records it, sandbox-userns.ts checkRootfs). */
  blockOf(index: number): { uid: number; gid: number; size: number } {
    return { uid: this.range.uid + this.offset(index), gid: this.range.gid + this.offset(index), size: this.size };
  }

  /** The host owner a copy for block `index` gives an entry the image's tree has with host owner `uid`:`gid` (shiftCopy's move). */
  copyOwner(index: number): (uid: number, gid: number) => { uid: number; gid: number } {
    const off = this.offset(index);
    return (uid, gid) => ({ uid: uid === this.user.uid ? uid : uid + off, gid: gid === this.user.gid ? gid : gid + off });
  }

  /** Host ids back as the containers of block `index` see them (the server's ids are root), for a commit's layer. */
  mappingOf(index: number): { containerUid(host: number): number | undefined; containerGid(host: number): number | undefined } {
    const back = (host: number, own: number, start: number): number | undefined => {
      if (host === own) return 0;
      const n = host - start + 1 - this.offset(index);
      return n >= 1 && n < this.size ? n : undefined;
    };
    return { containerUid: (host) => back(host, this.user.uid, this.range.uid), containerGid: (host) => back(host, this.user.gid, this.range.gid) };
  }

  /**
   * Moves the owners of a fresh copy of an image's tree (made in the full namespace, where
   * container id n is id n) into block `index`: each distinct owner by one `chown -hR --from`
   * (links not followed, -R never crosses one), run as the full namespace's root. An owner
   * beyond the block's ids is refused, naming it.
   */
  async shiftCopy(copy: string, index: number): Promise<void> {
    if (index === 0) return;
    const script = 'd=$1; off=$2; size=$3; find "$d" -printf \'%U:%G\\n\' | sort -u | while IFS=: read -r u g; do '
      + 'if [ "$u" -ge "$size" ] || [ "$g" -ge "$size" ]; then echo "a file of the image is owned by $u:$g, beyond the $size ids of an owner\'s range" >&2; exit 3; fi; '
      + 'nu=$u; ng=$g; [ "$u" -eq 0 ] || nu=$((u + off)); [ "$g" -eq 0 ] || ng=$((g + off)); '
      + '[ "$nu:$ng" = "$u:$g" ] || chown -hR --from="$u:$g" "$nu:$ng" -- "$d" || exit 1; done';
    const done = await this.run(['sh', '-c', script, 'sh', copy, String(this.offset(index)), String(this.size)]);
    if (done.code !== 0) throw EngineError.conflict(`preparing the container's root filesystem for its owner's id range failed: ${done.stderr.trim()}`);
  }

  /** A 400 naming User when its uid or gid is beyond the mapped ids. */
  checkUser(user: { uid: number; gid: number }, spec: string): void {
    if (user.uid >= this.size || user.gid >= this.size) {
      throw EngineError.invalidParameter(`User "${spec}": ids above ${this.size - 1} are outside the container user namespace (container ids 0-${this.size - 1}: root is ${this.user.name}, the others its subordinate range of /etc/subuid and /etc/subgid${this.blocks > 1 ? ', cut into owners\' ranges by the sandbox option userns.size' : ''})`);
    }
  }

  /** The launcher transform for a container user of block `index` (userns/enter-mapped.ts); the namespace is made on first use. */
  async enter(user: { uid: number; gid: number }, index: number, held?: MappedTools['held']): Promise<(bwrap: string, args: string[], argv: string[]) => [string, string[]]> {
    const file = await this.blockFile(index);
    return (bwrap, args, argv) => inMappedNamespace({ ...this.tools, file, stageDir: this.stageDir, ...(held ? { held } : {}) }, bwrap, args, argv, user);
  }

  /** How an exec goes into a container of block `index` running as a non-root user (userns/exec-mapped.ts). */
  async execEnter(index: number, held?: MappedTools['held'], containerRoot = false): Promise<MappedExec> {
    const file = await this.blockFile(index);
    return (init, bwrap, args, argv, user) => {
      this.checkUser(user, `${user.uid}:${user.gid}`);
      return execInMappedNamespace({ ...this.tools, file, stageDir: this.stageDir, ...(held ? { held } : {}) }, init, bwrap, args, argv, user, containerRoot);
    };
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

  /** `/proc/<server pid>/fd/<n>` of block `index`'s namespace, made on first use. */
  private async blockFile(index: number): Promise<string> {
    // The whole range for containers without an owner: the full namespace itself.
    if (index === 0 && this.size - 1 === this.range.count) return this.file();
    let child = this.children.get(index);
    if (!child) {
      child = this.createBlock(index).catch((error: unknown) => {
        this.children.delete(index);
        throw EngineError.system(`cannot make the user namespace of owners' range ${index}: ${(error as Error).message}`, error);
      });
      this.children.set(index, child);
    }
    return `/proc/${process.pid}/fd/${await child}`;
  }

  /**
   * A child of the full namespace mapping container root onto its root (the server's user) and
   * 1 to size - 1 onto block `index`: `unshare --user` started in the full namespace as its root,
   * its maps written from there (two extents: the parent's map has two).
   */
  private async createBlock(index: number): Promise<number> {
    const parent = await this.file();
    const parentNs = readlinkSync(parent);
    const holder = spawn(this.tools.nsenter, [`--user=${parent}`, '--setuid=0', '--setgid=0', '--', this.tools.unshare, '--user', '--', 'cat'], { stdio: ['pipe', 'ignore', 'pipe'] });
    const map = `0 0 1\n1 ${1 + this.offset(index)} ${this.size - 1}\n`;
    return holdUserNamespace(holder, async (pid) => {
      const done = await this.run(['sh', '-c', 'printf %s "$1" > "/proc/$2/uid_map" && printf %s "$1" > "/proc/$2/gid_map"', 'sh', map, String(pid)]);
      if (done.code !== 0) throw new Error(`writing its map failed: ${done.stderr.trim()}`);
    }, parentNs);
  }

  private async create(): Promise<number> {
    const holder = spawn(this.tools.unshare, ['--user', '--', 'cat'], { stdio: ['pipe', 'ignore', 'pipe'] });
    const { user, range } = this;
    return holdUserNamespace(holder, async (pid) => {
      await mapWith(this.tools.newuidmap, pid, user.uid, range.uid, range.count, '/etc/subuid');
      await mapWith(this.tools.newgidmap, pid, user.gid, range.gid, range.count, '/etc/subgid');
    });
  }

  /** Lets the namespaces go (the containers in them keep them). */
  async close(): Promise<void> {
    for (const made of [this.namespace, ...this.children.values()]) {
      const fd = await made?.catch(() => undefined);
      if (fd !== undefined) closeSync(fd);
    }
    this.namespace = undefined;
    this.children.clear();
  }
}

/** `newuidmap PID 0 OWN 1 1 START COUNT` (or newgidmap): container root onto the user's own id, 1 to COUNT onto the range. */
async function mapWith(tool: string, pid: number, own: number, start: number, count: number, file: string): Promise<void> {
  const done = await runOffLoop(tool, [String(pid), '0', String(own), '1', '1', String(start), String(count)]);
  if (done.code !== 0) throw new Error(`${tool} refused to map ${file}'s range (${start}, ${count} ids): ${done.stderr.trim() || `status ${String(done.code ?? done.signal)}`}`);
}
