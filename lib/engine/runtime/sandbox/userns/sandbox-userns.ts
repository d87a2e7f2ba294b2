import { chownSync, readFileSync, writeFileSync } from 'node:fs';
import { EngineError } from '../../../../engine-api/engine-error.js';
import type { ResolvedUser } from '../passwd.js';
import type { IdMap } from './id-map.js';
import { inUserNamespace } from './enter.js';
import { UserNamespace } from './user-namespace.js';

/** How a launcher runs `bwrap args -- argv` as one container user inside the namespace. */
export type Enter = (bwrap: string, args: string[], argv: string[]) => [string, string[]];

/** The host tools a launcher enters a user namespace with (userns/enter.ts). */
export interface UsernsHostTools {
  unshare: string;
  nsenter: string;
  setpriv: string;
  /** The idmap helper (linux/idmap-helper.ts) in the state directory; none: host binds stay plain. */
  idmap?: string | undefined;
}

/**
 * One user namespace of the sandbox runtime as the runtime uses it: one container range (the
 * containers of one owner, owner-userns.ts), the namespace made at its first start, and the few
 * places where the host ids show (root filesystem copies, shared tmpfs directories, users
 * outside the range).
 */
export class SandboxUserns {
  private namespace: Promise<UserNamespace> | undefined;

  constructor(readonly map: IdMap, private readonly tools: UsernsHostTools) {}

  /** The launcher transform for `user` (the namespace is made on first use). */
  async enter(user: { uid: number; gid: number; groups?: readonly number[] | undefined }): Promise<Enter> {
    this.checkUser(user, `${user.uid}:${user.gid}`);
    const ns = await this.open();
    return (bwrap, args, argv) => inUserNamespace({ ...this.tools, file: ns.file, gid: this.map.gid, uid: this.map.uid }, bwrap, args, argv, user);
  }

  /** The exec transform (any user, chosen per exec). */
  async execEnter(): Promise<(bwrap: string, args: string[], argv: string[], user: { uid: number; gid: number; groups?: readonly number[] | undefined }) => [string, string[]]> {
    const ns = await this.open();
    return (bwrap, args, argv, user) => {
      this.checkUser(user, `${user.uid}:${user.gid}`);
      return inUserNamespace({ ...this.tools, file: ns.file, gid: this.map.gid, uid: this.map.uid }, bwrap, args, argv, user);
    };
  }

  /** A 400 naming User when its uid or gid is beyond the range (the kernel could not run it). */
  checkUser(user: Pick<ResolvedUser, 'uid' | 'gid' | 'groups'>, spec: string): void {
    const beyond = (user.groups ?? []).find((g) => g >= this.map.size);
    if (beyond !== undefined) {
      throw EngineError.invalidParameter(`HostConfig.GroupAdd: gid ${beyond} is outside the container user namespace's range (0-${this.map.size - 1})`);
    }
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
