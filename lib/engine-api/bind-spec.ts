import { EngineError } from './engine-error.js';

/**
 * One `HostConfig.Binds` entry, parsed once at decode from dockerd's `[source:]target[:modes]`.
 * The runtime checks the modes it honors.
 */
export interface BindSpec {
  /** An absolute host path, a named volume's name, or `''` for `/path` alone (an anonymous volume there). */
  source: string;
  /** The path in the container. */
  target: string;
  /** The modes as sent (`ro`, `rw`, `z`, `nocopy`, `rshared`…), in order; empty when none. */
  modes: readonly string[];
  /** `ro` among the modes. */
  readOnly: boolean;
  /** The propagation mode among the modes (`rshared`, `private`…); `''` when none is. */
  propagation: string;
}

const PROPAGATIONS: ReadonlySet<string> = new Set(['shared', 'rshared', 'slave', 'rslave', 'private', 'rprivate']);

/**
 * A bind entry typed (see {@link BindSpec}). A host path or volume name with no absolute target,
 * an empty source or more than three parts is dockerd's `invalid volume specification`.
 *
 * @throws {EngineError} InvalidParameter.
 * @example
 * parseBindEntry('/srv:/data:ro,z'); // { source: '/srv', target: '/data', modes: ['ro', 'z'], readOnly: true, propagation: '' }
 */
export function parseBindEntry(entry: string): BindSpec {
  const parts = entry.split(':');
  const invalid = (): EngineError => EngineError.invalidParameter(`invalid volume specification: '${entry}'`);
  if (parts.length === 1) {
    if (!entry.startsWith('/')) throw invalid();
    return { source: '', target: entry, modes: [], readOnly: false, propagation: '' };
  }
  const [source = '', target = '', mode] = parts;
  if (parts.length > 3 || source === '' || !target.startsWith('/')) throw invalid();
  const modes = mode === undefined || mode === '' ? [] : mode.split(',');
  return { source, target, modes, readOnly: modes.includes('ro'), propagation: modes.find((m) => PROPAGATIONS.has(m)) ?? '' };
}

/** A typed bind written back as an entry (`/srv:/data:ro`), for messages and the Docker CLI's form. */
export function bindEntryOf(bind: BindSpec): string {
  if (bind.source === '') return bind.target;
  return `${bind.source}:${bind.target}${bind.modes.length > 0 ? `:${bind.modes.join(',')}` : ''}`;
}
