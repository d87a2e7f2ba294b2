import { DockgateError } from '../../errors/dockgate-error.js';

/**
 * Error codes of the registry API (distribution `docs/spec/api.md` "Errors" and `registry/api/errcode`).
 * Bearer protection itself answers UNAUTHORIZED, NAME_INVALID and UNAVAILABLE; host routes use the rest.
 */
export type RegistryErrorCode =
  | 'BLOB_UNKNOWN' | 'BLOB_UPLOAD_INVALID' | 'BLOB_UPLOAD_UNKNOWN' | 'DIGEST_INVALID' | 'MANIFEST_BLOB_UNKNOWN'
  | 'MANIFEST_INVALID' | 'MANIFEST_UNKNOWN' | 'MANIFEST_UNVERIFIED' | 'NAME_INVALID' | 'NAME_UNKNOWN'
  | 'PAGINATION_NUMBER_INVALID' | 'RANGE_INVALID' | 'SIZE_INVALID' | 'TAG_INVALID' | 'UNAUTHORIZED' | 'DENIED'
  | 'UNSUPPORTED' | 'TOOMANYREQUESTS' | 'UNAVAILABLE' | 'UNKNOWN';

/** One `detail` record of an UNAUTHORIZED error, keyed as the registry's Go struct (no JSON tags) writes them. */
export interface AccessRecordDetail {
  Type: string;
  Class: string;
  Name: string;
  Action: string;
}

/** What a {@link RegistryError} carries besides its message. */
export interface RegistryErrorOptions {
  /** HTTP status. */
  status: number;
  /** The `detail` member of the error entry. */
  detail?: unknown;
  /** The complete `WWW-Authenticate` value, for 401 answers. */
  challenge?: string;
  /** Seconds for `Retry-After`, for 503 answers. */
  retryAfter?: number;
  cause?: unknown;
}

/**
 * The one error type of the registry protocol in dockgate: written by {@link writeRegistryError}
 * as `{"errors":[{"code","message","detail"}]}`, the only error shape registry clients decode.
 *
 * @example
 * throw new RegistryError('NAME_INVALID', 'invalid repository name', { status: 400 });
 */
export class RegistryError extends DockgateError {
  static override code = 'ERR_REGISTRY';
  override readonly code = 'ERR_REGISTRY';
  readonly errorCode: RegistryErrorCode;
  readonly status: number;
  readonly detail: unknown;
  readonly challenge: string | undefined;
  readonly retryAfter: number | undefined;

  constructor(errorCode: RegistryErrorCode, message: string, options: RegistryErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.errorCode = errorCode;
    this.status = options.status;
    this.detail = options.detail;
    this.challenge = options.challenge;
    this.retryAfter = options.retryAfter;
  }
}
