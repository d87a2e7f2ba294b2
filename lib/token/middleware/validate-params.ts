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

/**
 * What is wrong with a whole form or query, naming the field, or undefined: a repeated field the
 * endpoint does not know (RFC 6749 §3.2, without echoing its name), then each known field by its
 * rule (check-params.ts) after the no-repeats rule (reject-duplicates.ts), then `scope`'s repeats
 * (its grammar is the scope parser's, answered `invalid_scope`).
 */
function paramsProblem(params: Record<string, unknown>, rules: readonly ParamRule[], known: ReadonlySet<string>, location: 'body' | 'query', multi: readonly string[]): string | undefined {
  for (const name in params) {
    if (!known.has(name) && typeof params[name] !== 'string') return 'a parameter must not be provided more than once';
  }
  for (const rule of rules) {
    const value = params[rule.name];
    const problem = duplicateField(rule.name, value, params, location, multi) ?? checkField(rule, value);
    if (problem) return problem;
  }
  return duplicateField('scope', params['scope'], params, location, multi);
}

/**
 * One express-validator chain per endpoint, built once with the router, over the whole form (or
 * query) as ONE field, the selection express-validator documents as `body()` / `query()`: its one
 * `custom` validator checks every field (`paramsProblem`), and on success the middleware takes the
 * chain's typed result with ONE `matchedData` call and keeps it for the handler (`read`).
 *
 * Why this shape, by the profile of bench:token (express-validator's cost grows with the number
 * of field instances it is given, not with what the rules do): each instance costs a path
 * expansion, a lodash `get`, an async validator call, a pass of lodash's group-and-filter per
 * chain item and per `matchedData`, and a `set`. One field per field of the form (eight) cost
 * 40-50 µs a token in the demo as shipped, a tenth of the whole grant; the form as one instance
 * costs a third of that. So: one chain, one item in it (a `.bail()`, a second validator or a
 * sanitizer adds a pass), one `matchedData` per request (the handler and the grant-duration label
 * both read the fields). The result is the form as parsed, so a field the endpoint does not know
 * is in it (RFC 6749 §3.1: unknown parameters are ignored); the handlers read the typed fields only.
 */
function validator<T extends object>(location: 'body' | 'query', rules: readonly ParamRule[], multi: readonly string[] = []): ParamsValidator<T> {
  const { body, query, matchedData } = expressValidator();
  const known = new Set([...rules.map((rule) => rule.name), 'scope']);
  const chain: ValidationChain = (location === 'body' ? body : query)().custom((params: unknown) => {
    const problem = paramsProblem((params ?? {}) as Record<string, unknown>, rules, known, location, multi);
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
    chain.run(req).then((result) => {
      if (result.isEmpty()) {
        // The whole location is the chain's one field, whose path is the empty string.
        validated.set(req, matchedData<{ '': T }>(req, { locations })['']);
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
