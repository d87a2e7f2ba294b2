import type { RequestHandler } from 'express';
import { checkSchema, validationResult, type ParamSchema, type Schema } from 'express-validator';
import { OAuthError } from '../oauth-error.js';

/** RFC 6749 Appendix A.1: client_id = *VSCHAR, VSCHAR = %x20-7E. */
const VSCHAR = /^[\x20-\x7E]*$/;
/** NQSCHAR/UNICODECHARNOCRLF bound: no control characters in any value. */
const NO_CONTROL = /^[^\x00-\x1F\x7F]*$/;
const MAX = 4096;

const text = (location: 'body' | 'query', optional: boolean): ParamSchema => ({
  in: [location],
  ...(optional ? { optional: true } : { exists: { errorMessage: 'is required', bail: true } }),
  isString: { errorMessage: 'must be a string', bail: true },
  isLength: { options: { max: MAX }, errorMessage: `must be at most ${MAX} characters`, bail: true },
});

/** Fields of `POST /token` (distribution docs/spec/auth/oauth.md). */
const postSchema: Schema = {
  grant_type: { ...text('body', false), notEmpty: { errorMessage: 'is required' } },
  service: { ...text('body', false), notEmpty: { errorMessage: 'is required' }, matches: { options: NO_CONTROL, errorMessage: 'holds a control character' } },
  client_id: { ...text('body', false), notEmpty: { errorMessage: 'is required' }, matches: { options: VSCHAR, errorMessage: 'must be printable ASCII (RFC 6749 A.1)' } },
  access_type: { ...text('body', true), isIn: { options: [['online', 'offline']], errorMessage: 'must be "online" or "offline"' } },
  username: { ...text('body', true), matches: { options: NO_CONTROL, errorMessage: 'holds a control character' } },
  password: text('body', true),
  refresh_token: text('body', true),
};

/** Query of `GET /token` (distribution docs/spec/auth/token.md); `scope` repeats and is checked by the scope parser. */
const getSchema: Schema = {
  service: { ...text('query', false), notEmpty: { errorMessage: 'is required' }, matches: { options: NO_CONTROL, errorMessage: 'holds a control character' } },
  client_id: { ...text('query', true), matches: { options: VSCHAR, errorMessage: 'must be printable ASCII (RFC 6749 A.1)' } },
  offline_token: { ...text('query', true), isIn: { options: [['true', 'false']], errorMessage: 'must be "true" or "false"' } },
  account: { ...text('query', true), matches: { options: NO_CONTROL, errorMessage: 'holds a control character' } },
};

function validator(schema: Schema, location: 'body' | 'query'): RequestHandler[] {
  const report: RequestHandler = (req, _res, next) => {
    const first = validationResult(req).array({ onlyFirstError: true })[0];
    if (first) {
      // Name and rule only: the value may be a password.
      const path = first.type === 'field' ? first.path : 'request';
      next(new OAuthError('invalid_request', `"${path}" ${String(first.msg)}`));
      return;
    }
    next();
  };
  return [...checkSchema(schema, [location]), report];
}

/** Validates the POST form fields; a failure is `invalid_request` naming the field. */
export const validatePostParams = (): RequestHandler[] => validator(postSchema, 'body');
/** Validates the GET query; a failure is `invalid_request` naming the field. */
export const validateGetParams = (): RequestHandler[] => validator(getSchema, 'query');
