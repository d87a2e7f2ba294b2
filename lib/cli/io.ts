import { DockgateError } from '../errors/dockgate-error.js';

/** Where a CLI command reads and writes; the real process streams in `main`, buffers in specs. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Reads standard input to its end. */
  readStdin: () => Promise<string>;
}

/** A usage error: printed with the command's help, exit code 2. */
export class UsageError extends DockgateError {
  static override code = 'ERR_CLI_USAGE';
  override readonly code = 'ERR_CLI_USAGE';
}
