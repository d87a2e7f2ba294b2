import type { Request } from 'express';
import type { EngineCaller } from './policy-types.js';

/** How `engineRouter` learns who calls when a policy is set (its `caller` option). */
export type CallerResolver = (req: Request) => EngineCaller | undefined | Promise<EngineCaller | undefined>;

/** Nobody signed in: no subject, no claims, no grants. */
export const ANONYMOUS_CALLER: EngineCaller = Object.freeze({ claims: Object.freeze({}), access: Object.freeze([]) });

/**
 * The default {@link CallerResolver}: the verified bearer token that `requireBearer` or
 * `bearerGuard` put on the request (`req.bearer`), or an anonymous caller without one.
 */
export function callerFromBearer(req: Request): EngineCaller {
  const bearer = req.bearer;
  if (!bearer) return ANONYMOUS_CALLER;
  return { ...(bearer.subject !== '' ? { subject: bearer.subject } : {}), claims: bearer.claims, access: bearer.access };
}
