import type { RequestHandler } from 'express';
import { body, query, validationResult } from 'express-validator';
import { OAuthError } from '../oauth-error.js';
import { checkGetParams, checkPostParams, checkRevokeParams } from './check-params.js';

/**
 * One express-validator chain over the whole form or query, running the pure rules of
 * check-params.ts. One chain rather than one per field: per-field chains cost about 80 µs a
 * request (bench:token), a fifth of signing the token.
 */
function validator(location: 'body' | 'query', check: (params: Record<string, unknown>) => string | undefined): RequestHandler[] {
  const chain = (location === 'body' ? body() : query()).custom((params: unknown) => {
    const problem = check((params ?? {}) as Record<string, unknown>);
    if (problem) throw new Error(problem);
    return true;
  });
  const report: RequestHandler = (req, _res, next) => {
    const first = validationResult(req).array({ onlyFirstError: true })[0];
    next(first ? new OAuthError('invalid_request', String(first.msg)) : undefined);
  };
  return [chain, report];
}

/** Validates the POST form fields; a failure is `invalid_request` naming the field. */
export const validatePostParams = (): RequestHandler[] => validator('body', checkPostParams);
/** Validates the GET query; a failure is `invalid_request` naming the field. */
export const validateGetParams = (): RequestHandler[] => validator('query', checkGetParams);
/** Validates the `POST /revoke` form; a failure is `invalid_request` naming the field. */
export const validateRevokeParams = (): RequestHandler[] => validator('body', checkRevokeParams);
