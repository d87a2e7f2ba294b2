import type { EngineCaller } from './policy-types.js';

/** Decides whether a caller administers the engine (the built-in policies let administrators do anything). */
export type AdminPredicate = (caller: EngineCaller) => boolean;

/** Options of {@link adminPredicate}; any one that holds makes the caller an administrator. */
export interface AdminPredicateOptions {
  /** Accounts (`sub`) that administer. Defaults to none. */
  subjects?: readonly string[];
  /**
   * A grant in the token's `access` claim that makes its holder an administrator, as
   * `type:name:action` (for example `engine:api:admin`, granted by an ACL rule to the accounts
   * that administer). Defaults to `engine:api:admin`; `false` turns it off.
   */
  access?: string | false;
  /** The host's own test (a claim, a group label…). Defaults to none. */
  test?: (caller: EngineCaller) => boolean;
}

export const DEFAULT_ADMIN_ACCESS = 'engine:api:admin';

/**
 * Builds the administrator test the built-in policies take as `admin`.
 *
 * @example
 * const admin = adminPredicate({ subjects: ['root'] }); // or a token granted engine:api:admin
 * @throws {TypeError} naming the option that is malformed.
 */
export function adminPredicate(options: AdminPredicateOptions = {}): AdminPredicate {
  if (typeof options !== 'object' || options === null) throw new TypeError('adminPredicate options must be an object');
  const subjects = options.subjects ?? [];
  if (!Array.isArray(subjects) || !subjects.every((s) => typeof s === 'string' && s !== '')) {
    throw new TypeError('adminPredicate option "subjects" must be a list of non-empty account names');
  }
  const named = new Set(subjects);
  const grant = options.access === undefined ? DEFAULT_ADMIN_ACCESS : options.access;
  let wanted: { type: string; name: string; action: string } | undefined;
  if (grant !== false) {
    const m = typeof grant === 'string' ? /^([a-z0-9]+):(.+):([a-z]+)$/.exec(grant) : null;
    if (!m) throw new TypeError('adminPredicate option "access" must be type:name:action (such as engine:api:admin) or false');
    wanted = { type: m[1] as string, name: m[2] as string, action: m[3] as string };
  }
  const { test } = options;
  if (test !== undefined && typeof test !== 'function') throw new TypeError('adminPredicate option "test" must be a function');
  return (caller) => {
    if (caller.subject !== undefined && named.has(caller.subject)) return true;
    if (wanted && caller.access.some((e) => e.type === wanted.type && e.name === wanted.name && (e.actions.includes(wanted.action) || e.actions.includes('*')))) return true;
    return test ? test(caller) === true : false;
  };
}

/** The built-in policies' default: administrators are the holders of an `engine:api:admin` grant. */
export const defaultAdmin: AdminPredicate = adminPredicate();
