import { DockgateError } from '../errors/dockgate-error.js';

/** moby's errdefs classes that the engine API maps to HTTP statuses. */
export type EngineErrorKind =
  | 'NotModified'
  | 'InvalidParameter'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'Conflict'
  | 'System'
  | 'NotImplemented'
  | 'Unavailable';

/** errdefs → status, as dockerd's `GetHTTPErrorStatusCode` (errdefs/http_helpers.go). */
export const ENGINE_ERROR_STATUS: Readonly<Record<EngineErrorKind, number>> = Object.freeze({
  NotModified: 304,
  InvalidParameter: 400,
  Unauthorized: 401,
  Forbidden: 403,
  NotFound: 404,
  Conflict: 409,
  System: 500,
  NotImplemented: 501,
  Unavailable: 503,
});

const CODES: Readonly<Record<EngineErrorKind, string>> = {
  NotModified: 'ERR_ENGINE_NOT_MODIFIED',
  InvalidParameter: 'ERR_ENGINE_INVALID_PARAMETER',
  Unauthorized: 'ERR_ENGINE_UNAUTHORIZED',
  Forbidden: 'ERR_ENGINE_FORBIDDEN',
  NotFound: 'ERR_ENGINE_NOT_FOUND',
  Conflict: 'ERR_ENGINE_CONFLICT',
  System: 'ERR_ENGINE_SYSTEM',
  NotImplemented: 'ERR_ENGINE_NOT_IMPLEMENTED',
  Unavailable: 'ERR_ENGINE_UNAVAILABLE',
};

/**
 * The one error type of the engine API. Handlers and runtimes throw it; only
 * `writeEngineError` turns it into a response, so no handler picks a status by hand.
 * `message` is shown to clients as `{"message": …}` (the CLI prints "Error response from daemon: …").
 *
 * @example
 * throw EngineError.notFound(`No such container: ${id}`); // 404
 */
export class EngineError extends DockgateError {
  static override code = 'ERR_ENGINE';
  override readonly code: string;
  readonly kind: EngineErrorKind;
  readonly status: number;

  constructor(kind: EngineErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.status = ENGINE_ERROR_STATUS[kind];
    this.code = CODES[kind];
  }

  /** 404, e.g. `No such container: x`. */
  static notFound(message: string): EngineError {
    return new EngineError('NotFound', message);
  }
  /** 400, e.g. a bad query parameter or body. */
  static invalidParameter(message: string): EngineError {
    return new EngineError('InvalidParameter', message);
  }
  /** 409, e.g. a name in use or removing a running container. */
  static conflict(message: string): EngineError {
    return new EngineError('Conflict', message);
  }
  /** 304, e.g. starting a running container (sent without a body). */
  static notModified(message: string): EngineError {
    return new EngineError('NotModified', message);
  }
  /** 500, a failure of the runtime itself. */
  static system(message: string, cause?: unknown): EngineError {
    return new EngineError('System', message, { cause });
  }
  /** 501, an operation the runtime does not offer. */
  static notImplemented(message: string): EngineError {
    return new EngineError('NotImplemented', message);
  }
  /** 501 `<feature> is not supported by the <runtime> runtime`: an optional runtime operation is missing. */
  static unsupported(feature: string, runtimeName: string | undefined): EngineError {
    return new EngineError('NotImplemented', `${feature} is not supported by the ${runtimeName ?? 'custom'} runtime`);
  }

  /**
   * The class dockerd's Go client infers from a bare status (`FromStatusCode`): unmapped
   * 4xx are InvalidParameter, unmapped 5xx System. Used when forwarding a real engine's errors.
   */
  static fromStatus(status: number, message: string): EngineError {
    const exact = (Object.keys(ENGINE_ERROR_STATUS) as EngineErrorKind[]).find((k) => ENGINE_ERROR_STATUS[k] === status);
    if (exact) return new EngineError(exact, message);
    return new EngineError(status >= 400 && status < 500 ? 'InvalidParameter' : 'System', message);
  }
}
