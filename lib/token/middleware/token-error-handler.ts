import type { ErrorRequestHandler } from 'express';
import { OAuthError } from '../oauth-error.js';
import { writeOAuthError } from '../write-oauth-error.js';

/** body-parser's error types and the status RFC 6749 clients should see for them. */
const BODY_ERRORS: Record<string, [number, string]> = {
  'entity.too.large': [413, 'the request body is too large'],
  'parameters.too.many': [413, 'the request has too many parameters'],
  'entity.parse.failed': [400, 'the request body cannot be parsed'],
  'entity.verify.failed': [400, 'the request body cannot be parsed'],
  'request.aborted': [400, 'the request body was not received in full'],
  'request.size.invalid': [400, 'the request body does not match its Content-Length'],
  'charset.unsupported': [415, 'the request body charset is not supported'],
  'encoding.unsupported': [415, 'the request body encoding is not supported'],
};

/**
 * The token router's only error handler: OAuth errors are written as they are, body-parser
 * failures become `invalid_request` with their status, and anything else is logged through
 * `onError` and answered `server_error` without detail (node-oidc-provider's `expose` rule).
 */
export function tokenErrorHandler(
  onError: (err: unknown, req: Parameters<ErrorRequestHandler>[1]) => void,
  refused: (err: OAuthError, req: Parameters<ErrorRequestHandler>[1]) => void = () => {},
): ErrorRequestHandler {
  const write = (req: Parameters<ErrorRequestHandler>[1], res: Parameters<ErrorRequestHandler>[2], err: OAuthError): void => {
    refused(err, req);
    writeOAuthError(res, err);
  };
  return (err, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    if (err instanceof OAuthError) {
      if (err.status >= 500) onError(err.cause ?? err, req);
      write(req, res, err);
      return;
    }
    const type = (err as { type?: unknown })?.type;
    const bodyError = typeof type === 'string' ? BODY_ERRORS[type] : undefined;
    if (bodyError) {
      write(req, res, new OAuthError('invalid_request', bodyError[1], { status: bodyError[0] }));
      return;
    }
    // body-parser passes a decompression failure (garbage or truncated gzip/deflate/br) on as a
    // bare zlib error marked 400 (http-errors' `status`), with no `type`: still the client's input.
    const status = clientErrorStatus(err);
    if (status !== undefined) {
      const zlib = typeof (err as { code?: unknown }).code === 'string' && (err as { code: string }).code.startsWith('Z_');
      write(req, res, new OAuthError('invalid_request', zlib ? 'the request body cannot be decompressed' : 'the request is malformed', { status }));
      return;
    }
    onError(err, req);
    write(req, res, new OAuthError('server_error', 'the token service failed; retry later'));
  };
}

/** The 4xx status an http-errors style error (body-parser, the router) carries, if any. */
function clientErrorStatus(err: unknown): number | undefined {
  const status = (err as { status?: unknown; statusCode?: unknown } | null)?.status ?? (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status < 500 ? status : undefined;
}
