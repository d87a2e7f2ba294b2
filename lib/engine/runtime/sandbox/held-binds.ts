/**
 * A container's host bind sources, opened once per start by walking from `/` without following
 * anything, and held open while the container runs.
 *
 * A bind source was resolved with realpath at create (container-mounts.ts `resolved`), and the
 * tenant policy checked that resolution. Between create and a start (or any restart), whoever
 * can write on the way (another container binding the parent read-write) may swap a component
 * for a symbolic link: bwrap, given the path, would follow it and bind what it names (the host's
 * root). So each start walks the stored path one component at a time (`Beneath`, from `/`), and
 * a link met on the way is a 400 naming the bind. The directory or file found is opened and held:
 * the launcher's staging mount (userns/enter.ts) binds `/proc/<server pid>/fd/<n>`, and checks
 * after mounting that what it mounted is the held object (device and inode), as bubblewrap's own
 * `--bind-fd` does. An exec binds the same held objects. The descriptors close when the container
 * exits (or the copy ends).
 *
 * Not held: a socket, FIFO or device (`-v /var/run/docker.sock:…`, an administrator's), which
 * cannot or should not be opened. The walk still refuses a link at its name or on its path, but
 * the launcher binds it by path: a swap between the walk and the mount is not detected for these.
 * Rootless with a subordinate range, the launcher runs inside the server's user namespace, where
 * the kernel refuses to follow the server's descriptor links: it mounts the walked path and checks
 * the mount against the held object's device and inode ({@link HeldBinds.identities}).
 * Without the runtime's user namespace (root with `userns: false`, rootless with one id) there is
 * no staging mount: bwrap binds the walked path, with the same small window.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { EngineError } from '../../../engine-api/engine-error.js';
import { Beneath, BeneathError } from '../../linux/beneath.js';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** One bind of a container: its host source and where it shows in the container. */
export interface BindSource { source: string; target: string }

/** A held source as a launcher inside a user namespace mounts it: by its walked path, then checked to be the held object (`dev:ino`). */
export interface CheckedSource { path: string; id: string }

export class HeldBinds {
  /** Each held descriptor's object (`dev:ino`), by its procfs name, read once (fstat) when first asked. */
  private readonly ids = new Map<string, CheckedSource>();

  private constructor(private readonly held: ReadonlyMap<string, FileHandle | undefined>) {}

  /** Nothing held: for a body without binds, or where nothing needs holding. */
  static none(): HeldBinds {
    return new HeldBinds(new Map());
  }

  /**
   * Walks and opens every source of `binds`; throws a 400 naming the first one with a link on
   * its path, or missing. Nothing stays open when it throws.
   */
  static async open(binds: readonly BindSource[]): Promise<HeldBinds> {
    const held = new Map<string, FileHandle | undefined>();
    if (binds.length === 0) return new HeldBinds(held);
    const root = await Beneath.open('/');
    try {
      for (const bind of binds) {
        if (!held.has(bind.source)) held.set(bind.source, await hold(root, bind));
      }
    } catch (error) {
      await new HeldBinds(held).close();
      throw error;
    } finally {
      await root.close();
    }
    return new HeldBinds(held);
  }

  /**
   * What the launcher binds for `source`: the procfs name of its held descriptor, which the
   * kernel resolves to the object opened at the walk; a socket, FIFO or device: its path.
   */
  path(source: string): string {
    if (!this.held.has(source)) throw new Error(`bind source ${source} was not walked at start (held-binds.ts)`);
    const handle = this.held.get(source);
    return handle ? `/proc/${process.pid}/fd/${handle.fd}` : source;
  }

  /**
   * The held objects' identities (device and inode, from their descriptors), for a launcher that
   * cannot reach `/proc/<server pid>/fd/<n>`: from inside a user namespace the kernel refuses to
   * follow another process's descriptor links (no CAP_SYS_PTRACE over the server's namespace).
   * It mounts the walked path and checks that what it mounted is this object (userns/enter.ts).
   */
  async identities(): Promise<(held: string) => CheckedSource | undefined> {
    for (const [source, handle] of this.held) {
      if (!handle) continue;
      const st = await handle.stat({ bigint: true });
      this.ids.set(`/proc/${process.pid}/fd/${handle.fd}`, { path: source, id: `${st.dev}:${st.ino}` });
    }
    return (held) => this.ids.get(held);
  }

  /** Closes every held descriptor. */
  async close(): Promise<void> {
    await Promise.all([...this.held.values()].map((h) => h?.close().catch(() => undefined)));
  }
}

/** The bind's source opened without following; undefined for a socket, FIFO or device (bound by path). */
async function hold(root: Beneath, bind: BindSource): Promise<FileHandle | undefined> {
  const { source, target } = bind;
  const refused = (why: string): EngineError => EngineError.invalidParameter(`bind source ${source} (at ${target}) ${why}`);
  const changed = refused('changed since the container was created: a symbolic link is now on its path');
  // `/:/host` (an administrator's): the root itself, which no link can replace.
  if (source.split('/').every((p) => p === '' || p === '.')) return open('/', O_RDONLY);
  let parent: { dir: Beneath; name: string };
  try {
    parent = await root.parentOf(source);
  } catch (error) {
    throw whyNot(error, refused, changed);
  }
  try {
    const stat = await parent.dir.lstatChild(parent.name);
    if (!stat) throw refused('does not exist');
    if (stat.isSymbolicLink()) throw changed;
    if (!stat.isDirectory() && !stat.isFile()) return undefined;
    const handle = await open(parent.dir.at(parent.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK).catch((error: unknown) => { throw whyNot(error, refused, changed); });
    const opened = await handle.stat();
    if (opened.isDirectory() || opened.isFile()) return handle;
    await handle.close();
    throw refused('changed since the container was created: it is no longer a directory or a file');
  } finally {
    await parent.dir.close();
  }
}

/** A walk's failure as the 400 it is: a link on the way, a component that is not a directory, a missing one. */
function whyNot(error: unknown, refused: (why: string) => EngineError, changed: EngineError): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP') return changed;
  if (error instanceof BeneathError && code === 'EINVAL') return refused(error.message);
  if (code === 'ENOTDIR') return refused('changed since the container was created: a component of its path is not a directory');
  if (code === 'ENOENT') return refused('does not exist');
  return error;
}
