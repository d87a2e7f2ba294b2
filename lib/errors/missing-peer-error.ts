import { DockgateError } from './dockgate-error.js';

/**
 * An optional peer dependency a subpath needs is not installed (node-pty for the sandbox and
 * process runtimes). The message names the package and the command that installs it.
 */
export class MissingPeerError extends DockgateError {
  static override code = 'ERR_MISSING_PEER';
  override readonly code = 'ERR_MISSING_PEER';
  /** The npm package to install. */
  readonly packageName: string;

  constructor(packageName: string, neededBy: string, options?: { cause?: unknown }) {
    super(`${neededBy} needs the optional peer dependency ${packageName}: run \`npm install ${packageName}\``, options);
    this.packageName = packageName;
  }
}

/**
 * Imports an optional peer, turning "cannot find package" into a {@link MissingPeerError}. The
 * import is passed as a function so the specifier stays a literal that bundlers and tsc see.
 */
export async function importPeer<T>(load: () => Promise<T>, packageName: string, neededBy: string): Promise<T> {
  try {
    return await load();
  } catch (err) {
    const code = (err as { code?: string }).code;
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && String((err as Error).message).includes(packageName)) {
      throw new MissingPeerError(packageName, neededBy, { cause: err });
    }
    throw err;
  }
}
