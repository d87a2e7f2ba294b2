/**
 * Base class of every error dockgate throws. Each subclass carries a stable `code`
 * (`ERR_…`) so callers can `switch (err.code)` instead of matching messages.
 */
export class DockgateError extends Error {
  static code = 'ERR_DOCKGATE';
  readonly code: string = 'ERR_DOCKGATE';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = this.constructor.name;
    Error.captureStackTrace?.(this, this.constructor);
  }
}
