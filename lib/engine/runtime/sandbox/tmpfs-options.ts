import { EngineError } from '../../../engine-api/engine-error.js';

/** One `HostConfig.Tmpfs` mount as the sandbox makes it: a real tmpfs of this size and root mode. */
export interface TmpfsMount {
  path: string;
  /** Bytes (`size=`), at most the server's cap. */
  size: number;
  /** Mode of its root directory (`mode=`). */
  mode: number;
  noexec: boolean;
}

/** Mode of a tmpfs without `mode=` (what bwrap's own tmpfs has, and what this runtime always gave). */
const DEFAULT_MODE = 0o755;
const UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 };
/** Flags that say what every sandbox tmpfs is anyway (nosuid, nodev, rw), or pick exec. */
const FLAGS = new Set(['rw', 'nosuid', 'nodev', 'exec', 'noexec']);

/**
 * A Tmpfs entry's options (`size=64m,mode=1777,noexec`, as `docker run --tmpfs /x:size=64m`
 * sends them) checked once at create: `size=` (bytes, or k/m/g) up to `cap` (the tmpfsSize
 * option: more is refused, naming it), `mode=` (octal) and the flags above. Without `size=` the
 * cap is the size. Every other option is refused naming it, never dropped.
 */
export function tmpfsMount(path: string, options: unknown, cap: number): TmpfsMount {
  if (options !== undefined && options !== null && typeof options !== 'string') throw EngineError.invalidParameter(`HostConfig.Tmpfs options for "${path}" must be a string`);
  const mount: TmpfsMount = { path, size: cap, mode: DEFAULT_MODE, noexec: false };
  for (const option of (options ?? '').split(',').filter((o) => o !== '')) {
    const [key = '', value] = option.split('=', 2) as [string, string | undefined];
    if (value === undefined && FLAGS.has(key)) {
      if (key === 'noexec' || key === 'exec') mount.noexec = key === 'noexec';
      continue;
    }
    if (key === 'size' && value !== undefined) {
      const m = /^(\d+)([kmg]?)$/i.exec(value);
      if (!m) throw EngineError.invalidParameter(`HostConfig.Tmpfs "${path}": size "${value}" must be a number of bytes, or k, m or g`);
      const bytes = Number(m[1]) * UNITS[(m[2] ?? '').toLowerCase()]!;
      if (bytes < 1) throw EngineError.invalidParameter(`HostConfig.Tmpfs "${path}": size must be at least 1 byte`);
      if (bytes > cap) throw EngineError.invalidParameter(`HostConfig.Tmpfs "${path}": size ${value} is more than this server's tmpfs cap of ${cap} bytes (sandboxRuntime option "tmpfsSize")`);
      mount.size = bytes;
      continue;
    }
    if (key === 'mode' && value !== undefined) {
      if (!/^[0-7]{1,4}$/.test(value)) throw EngineError.invalidParameter(`HostConfig.Tmpfs "${path}": mode "${value}" must be octal`);
      mount.mode = parseInt(value, 8);
      continue;
    }
    throw EngineError.invalidParameter(`HostConfig.Tmpfs "${path}": option "${option}" is not supported by the sandbox runtime (size, mode, rw, exec, noexec, nosuid, nodev)`);
  }
  return mount;
}

/**
 * Every `HostConfig.Tmpfs` entry of a create checked ({@link tmpfsMount}), and their sizes
 * summed: each mount is capped, and so is what they hold together, or forty mounts of the cap
 * each would take forty times its memory. A mount without `size=` counts at the cap (its size).
 * `Mounts` of type tmpfs arrive here as Tmpfs entries (container-mounts.ts executionSpec).
 *
 * @param total Bytes all of them may hold (sandboxRuntime option "maxTmpfsBytes").
 * @throws {EngineError} InvalidParameter naming HostConfig.Tmpfs and the option.
 */
export function tmpfsMounts(tmpfs: Readonly<Record<string, unknown>>, cap: number, total: number): TmpfsMount[] {
  const mounts = Object.entries(tmpfs).map(([path, options]) => tmpfsMount(path, options, cap));
  const sum = mounts.reduce((bytes, m) => bytes + m.size, 0);
  if (sum > total) {
    throw EngineError.invalidParameter(`HostConfig.Tmpfs (and Mounts of type tmpfs): ${mounts.length} tmpfs mounts of ${sum} bytes together are more than this server allows per container (${total} bytes, sandboxRuntime option "maxTmpfsBytes"; a mount without size= counts at the tmpfsSize cap of ${cap})`);
  }
  return mounts;
}
