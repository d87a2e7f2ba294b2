import { InvalidCredentialsError, ResultCodeError, SizeLimitExceededError, type Client, type Entry } from 'ldapts';
import { AuthenticatorUnavailableError } from '../authenticator-unavailable-error.js';
import type { Authenticator, Identity } from '../types.js';
import { assertTlsState, closeQuietly, openLdapClient, ServiceConnection } from './ldap-connection.js';
import { firstRdnValue } from './ldap-dn.js';
import { ldapFilter } from './ldap-filter.js';
import { resolveLdapOptions, type LdapAuthenticatorOptions, type ResolvedLdapOptions } from './ldap-options.js';

/** An LDAP result code (the directory answered): the connection is still good. */
const isResultError = (err: unknown): boolean => err instanceof ResultCodeError;

/** The values of an attribute of an entry, matched case-insensitively (RFC 4512 §2.5), as strings. */
function values(entry: Entry, name: string): string[] {
  const lower = name.toLowerCase();
  const key = Object.keys(entry).find((k) => k.toLowerCase() === lower);
  const raw = key === undefined ? undefined : entry[key];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return list.map((v) => (Buffer.isBuffer(v) ? v.toString('utf8') : String(v))).filter((v) => v.length > 0);
}

function groupName(value: string): string {
  return value.includes('=') ? (firstRdnValue(value) ?? value) : value;
}

/** Rejects with an AuthenticatorUnavailableError when `work` has not settled within the timeout. */
function withDeadline<T>(options: ResolvedLdapOptions, work: Promise<T>, onTimeout: () => void): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      onTimeout();
      reject(new AuthenticatorUnavailableError(`LDAP server ${options.url.host} did not answer within ${options.timeoutMs} ms`, { retryAfter: options.retryAfter }));
    }, options.timeoutMs);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * An {@link Authenticator} against an LDAP directory (OpenLDAP, Active Directory, FreeIPA…),
 * search-then-bind as cesanta/docker_auth does: the service account (or an anonymous search)
 * finds the one entry under `baseDN` matching `userFilter` with the login name escaped per RFC
 * 4515, then a bind as that entry's DN with the given password decides. Groups (from
 * `groupAttribute` such as `memberOf`, and/or `groupSearch`) become the `groups` label and
 * `labelAttributes` further labels, for ACL rules such as
 * `{ match: { labels: { groups: 'team-*' }, name: '${labels:groups}/*' }, actions: ['pull', 'push'] }`.
 *
 * - An empty password is refused before any bind: LDAP treats a simple bind with a DN and no
 *   password as an anonymous ("unauthenticated") bind that succeeds (RFC 4513 §5.1.2).
 * - A name no entry matches resolves to undefined ("not mine", see {@link chainAuthenticators});
 *   a wrong password to null; a filter matching several entries to null, reported via `onError`.
 * - A directory that is down, refuses the service bind, or takes longer than `timeoutMs` throws
 *   an {@link AuthenticatorUnavailableError}: the client gets 503 with Retry-After, never 500,
 *   a hang, or "invalid password".
 * - The service connection is kept and reused; each password bind gets its own short connection,
 *   so a user's bind never changes the identity the searches run as.
 * - `lookup` (refresh grants) searches for the subject with `userFilter` on the service
 *   connection: an entry is `active`, none `unknown` (deleted, or disabled by a filter such as
 *   `(&(uid=${account})(!(pwdAccountLockedTime=*)))`), so its refresh tokens stop and are revoked.
 *
 * @throws {TypeError} at construction, naming a bad option.
 * @example
 * const authenticate = ldapAuthenticator({
 *   url: 'ldaps://ldap.example.com', tls: { ca: readFileSync('ca.pem') },
 *   bindDN: 'cn=dockgate,ou=services,dc=example,dc=com', bindPassword: readFileSync('bind-password', 'utf8').trim(),
 *   baseDN: 'ou=people,dc=example,dc=com', userFilter: '(&(objectClass=inetOrgPerson)(uid=${account}))',
 *   groupAttribute: 'memberOf', accountAttribute: 'uid',
 * });
 */
export function ldapAuthenticator(options: LdapAuthenticatorOptions): Authenticator {
  const resolved = resolveLdapOptions(options);
  const service = new ServiceConnection(resolved);
  const userAttributes = [
    ...(resolved.accountAttribute ? [resolved.accountAttribute] : []),
    ...(resolved.groupAttribute ? [resolved.groupAttribute] : []),
    ...resolved.labelAttributes.map(([, attr]) => attr),
  ];

  async function findUser(account: string): Promise<Entry | null | undefined> {
    const filter = ldapFilter(resolved.userFilter, { account });
    try {
      const { searchEntries } = await service.run((client) => client.search(resolved.baseDN, {
        scope: 'sub', filter, sizeLimit: 2, attributes: userAttributes.length > 0 ? userAttributes : ['1.1'],
      }), isResultError);
      if (searchEntries.length === 1) return searchEntries[0] as Entry;
      if (searchEntries.length === 0) return undefined;
    } catch (err) {
      if (!(err instanceof SizeLimitExceededError)) throw err;
    }
    resolved.onError(new Error(`ldapAuthenticator: "userFilter" matched more than one entry under ${resolved.baseDN}; login refused`));
    return null;
  }

  async function groupsOf(entry: Entry, account: string): Promise<string[]> {
    const names = new Set<string>();
    if (resolved.groupAttribute) for (const value of values(entry, resolved.groupAttribute)) names.add(groupName(value));
    const search = resolved.groupSearch;
    if (search) {
      const filter = ldapFilter(search.filter, { dn: entry.dn, account });
      const { searchEntries } = await service.run((client) => client.search(search.baseDN, {
        scope: 'sub', filter, attributes: [search.nameAttribute],
      }), isResultError);
      for (const group of searchEntries) for (const value of values(group, search.nameAttribute)) names.add(value);
    }
    return [...names];
  }

  async function passwordMatches(dn: string, password: string, opened: Set<Client>): Promise<boolean> {
    const client = await openLdapClient(resolved);
    opened.add(client);
    try {
      // The user's password never goes out on a connection that is not encrypted as demanded.
      assertTlsState(resolved, client);
      await client.bind(dn, password);
      return true;
    } catch (err) {
      if (err instanceof InvalidCredentialsError) return false;
      throw err;
    } finally {
      opened.delete(client);
      closeQuietly(client);
    }
  }

  async function authenticate(username: string, password: string, opened: Set<Client>): Promise<Identity | null | undefined> {
    const entry = await findUser(username);
    if (!entry) return entry;
    if (password.length === 0) return null;
    if (!(await passwordMatches(entry.dn, password, opened))) return null;
    const labels: Record<string, string[]> = {};
    for (const [label, attr] of resolved.labelAttributes) labels[label] = values(entry, attr);
    if (resolved.groupAttribute || resolved.groupSearch) labels[resolved.groupsLabel] = await groupsOf(entry, username);
    const subject = resolved.accountAttribute ? values(entry, resolved.accountAttribute)[0] : username;
    if (!subject) {
      resolved.onError(new Error(`ldapAuthenticator: the entry found has no "${resolved.accountAttribute}" (accountAttribute); login refused`));
      return null;
    }
    return Object.keys(labels).length > 0 ? { subject, labels } : { subject };
  }

  /** Runs directory work under the deadline; every failure that is not a verdict becomes AuthenticatorUnavailableError. */
  async function directory<T>(work: (opened: Set<Client>) => Promise<T>): Promise<T> {
    const opened = new Set<Client>();
    try {
      return await withDeadline(resolved, work(opened), () => {
        // Whatever hangs is abandoned: the service connection is reopened by the next login.
        service.drop();
        for (const client of opened) closeQuietly(client);
      });
    } catch (err) {
      if (err instanceof AuthenticatorUnavailableError) throw err;
      const reason = err instanceof ResultCodeError ? `answered ${err.name} (${err.code})` : `is unreachable (${(err as Error)?.message ?? String(err)})`;
      throw new AuthenticatorUnavailableError(`LDAP server ${resolved.url.host} ${reason}`, { retryAfter: resolved.retryAfter, cause: err });
    }
  }

  const ldap: Authenticator = async ({ username, password }) => {
    if (typeof username !== 'string' || username.length === 0 || typeof password !== 'string') return undefined;
    return directory((opened) => authenticate(username, password, opened));
  };
  ldap.lookup = async (subject) => {
    if (subject.length === 0) return 'unknown';
    const entry = await directory(() => findUser(subject));
    // Several entries refuse a login (null above), so they refuse a refresh too.
    return entry ? 'active' : entry === null ? 'disabled' : 'unknown';
  };
  return ldap;
}
