import type { Request, RequestHandler } from 'express';
import type { ValidationChain } from 'express-validator';
import { OAuthError } from '../oauth-error.js';
import { checkField, GET_RULES, POST_RULES, REVOKE_RULES, type ParamRule } from './check-params.js';
import { expressValidator } from './express-validator.js';
import { isForm } from './parse-form.js';
import { duplicateField } from './reject-duplicates.js';

const NOT_A_FORM = 'the request body must be application/x-www-form-urlencoded';

/** `POST /token`'s fields after validation, as `matchedData` gives them to the handler. */
export interface PostTokenParams {
  grant_type: string;
  service: string;
  client_id: string;
  access_type?: 'online' | 'offline';
  username?: string;
  password?: string;
  refresh_token?: string;
  /** Space-separated; repeated only by containers/image. Checked by the scope parser. */
  scope?: string | string[];
}

/** `GET /token`'s query after validation. */
export interface GetTokenParams {
  service: string;
  client_id?: string;
  offline_token?: 'true' | 'false';
  account?: string;
  /** Repeated, each one scope list. Checked by the scope parser. */
  scope?: string | string[];
}

/** `POST /revoke`'s form after validation. */
export interface RevokeParams {
  token: string;
  token_type_hint?: string;
}

/** `scope` is checked by the scope parser (invalid_scope); here only that it is text, repeated where allowed. */
const SCOPE: ParamRule = { name: 'scope' };

/**
 * One express-validator chain per endpoint over the endpoint's fields, each field checked by its
 * rule (check-params.ts) and RFC 6749 §3.2's no-repeats (reject-duplicates.ts); the handler reads
 * the validated fields with `matchedData`. One chain over all fields rather than a chain per
 * field: each chain run is its own async pass over the request, and eight of them cost more than
 * the rest of a refresh grant's own code (bench:token).
 */
function validator(location: 'body' | 'query', rules: readonly ParamRule[], multi: readonly string[] = []): RequestHandler {
  const { body, query } = expressValidator();
  const byName = new Map([...rules, SCOPE].map((rule) => [rule.name, rule]));
  const chain: ValidationChain = (location === 'body' ? body : query)([...byName.keys()]).custom((value: unknown, { req, path }) => {
    const params = (req[location] ?? {}) as Record<string, unknown>;
    const rule = byName.get(path);
    const problem = duplicateField(path, value, params, location, multi) ?? (rule && rule !== SCOPE ? checkField(rule, value) : undefined);
    if (problem) throw new Error(problem);
    return true;
  });
  return (req: Request, _res, next) => {
    if (location === 'body' && !isForm(req)) {
      next(new OAuthError('invalid_request', NOT_A_FORM));
      return;
    }
    // A repeated field the endpoint does not know is refused too (§3.2), without echoing its name.
    const params = (req[location] ?? {}) as Record<string, unknown>;
    for (const name in params) {
      if (!byName.has(name) && typeof params[name] !== 'string') {
        next(new OAuthError('invalid_request', 'a parameter must not be provided more than once'));
        return;
      }
    }
    chain.run(req).then((result) => {
      if (result.isEmpty()) {
        next();
        return;
      }
      next(new OAuthError('invalid_request', String(result.array({ onlyFirstError: true })[0]?.msg)));
    }, next);
  };
}

/** Validates the POST form fields; a failure is `invalid_request` naming the field. */
export const validatePostParams = (): RequestHandler => validator('body', POST_RULES);
/** Validates the GET query (repeated `scope` allowed); a failure is `invalid_request` naming the field. */
export const validateGetParams = (): RequestHandler => validator('query', GET_RULES, ['scope']);
/** Validates the `POST /revoke` form; a failure is `invalid_request` naming the field. */
export const validateRevokeParams = (): RequestHandler => validator('body', REVOKE_RULES);

/** The validated fields of `POST /token`. */
export const postTokenParams = (req: Request): PostTokenParams => expressValidator().matchedData<PostTokenParams>(req, { locations: ['body'] });
/** The validated query of `GET /token`. */
export const getTokenParams = (req: Request): GetTokenParams => expressValidator().matchedData<GetTokenParams>(req, { locations: ['query'] });
/** The validated form of `POST /revoke`. */
export const revokeParams = (req: Request): RevokeParams => expressValidator().matchedData<RevokeParams>(req, { locations: ['body'] });
