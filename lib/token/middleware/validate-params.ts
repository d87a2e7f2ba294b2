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
 * One express-validator chain per endpoint over the endpoint's fields, built once with the
 * router: each field is checked by its rule (check-params.ts) and RFC 6749 §3.2's no-repeats
 * (reject-duplicates.ts) in one `custom` validator, and on success the middleware takes the
 * chain's typed result with ONE `matchedData` call and keeps it for the handler (`read`).
 *
 * Why this shape, by the profile of bench:token (express-validator's cost grows with what it is
 * given, not with what the rules do): each field instance costs a path expansion, a lodash
 * `get`, an async validator call and a `set` in `matchedData`; each item of a chain costs a pass
 * over all instances; each chain run and each `matchedData` call costs a lodash group-and-filter
 * over every instance. So: one chain (per-field chains cost about 80 µs a token), one item in it
 * (a `.bail()` or a second validator doubles the passes), and one `matchedData` per request (the
 * handler and the grant-duration label both read the fields: a second call was a fifth of
 * express-validator's time).
 */
function validator<T extends object>(location: 'body' | 'query', rules: readonly ParamRule[], multi: readonly string[] = []): ParamsValidator<T> {
  const { body, query, matchedData } = expressValidator();
  const byName = new Map([...rules, SCOPE].map((rule) => [rule.name, rule]));
  const chain: ValidationChain = (location === 'body' ? body : query)([...byName.keys()]).custom((value: unknown, { req, path }) => {
    const params = (req[location] ?? {}) as Record<string, unknown>;
    const rule = byName.get(path);
    const problem = duplicateField(path, value, params, location, multi) ?? (rule && rule !== SCOPE ? checkField(rule, value) : undefined);
    if (problem) throw new Error(problem);
    return true;
  });
  const locations = [location];
  // Keyed by the request, so several token routers (and their requests) never share a result.
  const validated = new WeakMap<Request, T>();
  const middleware: RequestHandler = (req, _res, next) => {
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
        validated.set(req, matchedData<T>(req, { locations }));
        next();
        return;
      }
      next(new OAuthError('invalid_request', String(result.array({ onlyFirstError: true })[0]?.msg)));
    }, next);
  };
  const read = (req: Request): T => {
    const params = validated.get(req);
    // A handler mounted without its validator is a wiring mistake of ours, not the client's.
    if (params === undefined) throw new Error(`the ${location} of ${req.method} ${req.path} was read before it was validated`);
    return params;
  };
  return { middleware, read };
}

/** An endpoint's validation middleware and the typed reader of what it validated. */
interface ParamsValidator<T> {
  middleware: RequestHandler;
  /** The validated fields of a request the middleware passed. */
  read(req: Request): T;
}

// Built on first use (when the first tokenRouter is built), not at import: express-validator
// loads with them (express-validator.ts).
let post: ParamsValidator<PostTokenParams> | undefined;
let get: ParamsValidator<GetTokenParams> | undefined;
let revoke: ParamsValidator<RevokeParams> | undefined;
const postValidator = () => (post ??= validator<PostTokenParams>('body', POST_RULES));
const getValidator = () => (get ??= validator<GetTokenParams>('query', GET_RULES, ['scope']));
const revokeValidator = () => (revoke ??= validator<RevokeParams>('body', REVOKE_RULES));

/** Validates the POST form fields; a failure is `invalid_request` naming the field. */
export const validatePostParams = (): RequestHandler => postValidator().middleware;
/** Validates the GET query (repeated `scope` allowed); a failure is `invalid_request` naming the field. */
export const validateGetParams = (): RequestHandler => getValidator().middleware;
/** Validates the `POST /revoke` form; a failure is `invalid_request` naming the field. */
export const validateRevokeParams = (): RequestHandler => revokeValidator().middleware;

/** The validated fields of `POST /token` (express-validator's `matchedData`, taken once by the validator). */
export const postTokenParams = (req: Request): PostTokenParams => postValidator().read(req);
/** The validated query of `GET /token`. */
export const getTokenParams = (req: Request): GetTokenParams => getValidator().read(req);
/** The validated form of `POST /revoke`. */
export const revokeParams = (req: Request): RevokeParams => revokeValidator().read(req);
