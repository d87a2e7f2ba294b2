import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ResolvedUser } from '../passwd.js';
import { checkIdMap, subordinateIdMap, type IdMap } from './id-map.js';
import { inUserNamespace, STAGE_DIR } from './enter.js';
import { UserNamespace } from './user-namespace.js';

/** How a launcher runs `bwrap args -- argv` as one container user inside the namespace. */
export type Enter = (bwrap: string, args: string[], argv: string[]) => [string, string[]];

/**
 * The sandbox runtime's user namespace as the runtime uses it: the option read once, the
 * namespace made at the first start, and the few places where the host ids show (root
 * filesystem copies, shared tmpfs directories, users outside the range).
 */
export class SandboxUserns {
  private namespace: Promise<UserNamespace> | undefined;

  private constructor(readonly map: IdMap, private readonly tools: { unshare: string; nsenter: string; setpriv: string }) {}

  /**
   * Reads the runtime's `userns` option: on by default for a root server (range from
   * /etc/subuid, else 100000-165535), `false` off, `{ uid, gid, size }` a range of one's own.
   * Answers undefined when off. A server that is not root cannot write a full map: asking for one
   * there is a TypeError naming the option.
   */
  static fromOption(option: unknown, tools: { unshare: string; nsenter: string; setpriv: string }): SandboxUserns | undefined {
    const root = process.getuid?.() === 0;
    if (option === false || (option === undefined && !root)) return undefined;
    if (option !== undefined && option !== true && (typeof option !== 'object' || option === null)) {
      throw new TypeError('sandboxRuntime option "userns" must be a boolean or { uid, gid, size }');
    }
    if (!root) throw new TypeError('sandboxRuntime option "userns": mapping container ids onto a host range needs a server running as root');
    const map = option === undefined || option === true ? subordinateIdMap() : checkIdMap(option, 'userns');
    mkdirSync(STAGE_DIR, { recursive: true, mode: 0o711 });
    return new SandboxUserns(map, tools);
  }

  /** The launcher transform for `user` (the namespace is made on first use). */
  async enter(user: { uid: number; gid: number }): Promise<Enter> {
    this.checkUser(user, `${user.uid}:${user.gid}`);
    const ns = await this.open();
    return (bwrap, args, argv) => inUserNamespace({ ...this.tools, file: ns.file, gid: this.map.gid }, bwrap, args, argv, user);
  }

  /** The exec transform (any user, chosen per exec). */
  async execEnter(): Promise<(bwrap: string, args: string[], argv: string[], user: { uid: number; gid: number }) => [string, string[]]> {
    const ns = await this.open();
    return (bwrap, args, argv, user) => {
      this.checkUser(user, `${user.uid}:${user.gid}`);
      return inUserNamespace({ ...this.tools, file: ns.file, gid: this.map.gid }, bwrap, args, argv, user);
    };
  }

  /** A 400 naming User when its uid or gid is beyond the range (the kernel could not run it). */
  checkUser(user: Pick<ResolvedUser, 'uid' | 'gid'>, spec: string): void {
    if (user.uid >= this.map.size || user.gid >= this.map.size) {
      throw EngineError.invalidParameter(`User "${spec}": ids above ${this.map.size - 1} are outside the container user namespace's range (0-${this.map.size - 1})`);
    }
  }

  /** Gives directories made on the host for a container (shared tmpfs) to its root, as its own tmpfs would be. */
  ownByContainerRoot(dirs: readonly string[]): void {
    for (const dir of dirs) chownSync(dir, this.map.uid, this.map.gid);
  }

  /**
   * A container's root filesystem copy is prepared for one range: `marker` records which when
   * it is made; a copy made for another (or none, before the namespace) is refused at start
   * rather than run with owners that mean something else.
   */
  static checkRootfs(marker: string, map: IdMap | undefined, made: boolean): void {
    const want = map ? `${map.uid}.${map.gid}` : 'none';
    if (made) {
      writeFileSync(marker, `${want}\n`, { mode: 0o600 });
      return;
    }
    let have: string;
    try {
      have = readFileSync(marker, 'utf8').trim();
    } catch {
      have = 'none';
    }
    if (have !== want) {
      throw EngineError.conflict(`the container's root filesystem was prepared for ${have === 'none' ? 'no user namespace' : `host ids ${have}`}, not for this runtime's (${want === 'none' ? 'none' : want}): remove the container and create it again`);
    }
  }

  private open(): Promise<UserNamespace> {
    this.namespace ??= UserNamespace.create(this.map, this.tools.unshare).catch((error: unknown) => {
      this.namespace = undefined;
      throw EngineError.system(`cannot make the containers' user namespace: ${(error as Error).message}`, error);
    });
    return this.namespace;
  }
}
