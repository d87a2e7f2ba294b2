import { createRequire } from 'node:module';
import type * as ExpressValidator from 'express-validator';

let loaded: typeof ExpressValidator | undefined;

/**
 * express-validator, loaded when the first tokenRouter is built. It (with lodash and validator)
 * is most of what the root entry would otherwise load: a host that only protects routes
 * (requireBearer, bearerGuard) never needs it. It is CommonJS, so a synchronous require keeps
 * tokenRouter's construction synchronous.
 */
export function expressValidator(): typeof ExpressValidator {
  loaded ??= createRequire(import.meta.url)('express-validator') as typeof ExpressValidator;
  return loaded;
}
