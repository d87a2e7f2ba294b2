import { checkFilterTemplate } from './ldap-filter.js';
import { booleanOption, functionOption, integerOption, ldapUrl, nonBlankString } from '../../../options/option-checks.js';

/** TLS for the directory connection: `ldaps://` URLs, or StartTLS on `ldap://`. */
export interface LdapTlsOptions {
  /** PEM CA certificate(s) the server's certificate must chain to. Defaults to Node's built-in roots. */
  ca?: string | Buffer | ReadonlyArray<string | Buffer>;
  /**
   * Upgrade an `ldap://` connection with StartTLS (RFC 4511 §4.14) before anything is sent, the
   * service bind included. Not allowed with `ldaps://`, which is TLS from the start. Defaults to false.
   */
  startTLS?: boolean;
}

/** Where groups are searched when the user entry does not list them (`groupOfNames`, `posixGroup`). */
export interface LdapGroupSearch {
  /** Base DN of the group search. Required. */
  baseDN: string;
  /**
   * Filter; `${dn}` is the user's DN and `${account}` the login name, both escaped (RFC 4515).
   * Defaults to `(|(member=${dn})(uniqueMember=${dn}))` (groupOfNames, groupOfUniqueNames); use
   * `(memberUid=${account})` for posixGroup.
   */
  filter?: string;
  /** Attribute holding the group's name. Defaults to `cn`. */
  nameAttribute?: string;
}

/** Options of {@link ldapAuthenticator}. */
export interface LdapAuthenticatorOptions {
  /** `ldap://host[:port]` or `ldaps://host[:port]`. Required. */
  url: string;
  /** DN of the service account that searches for users. Defaults to an anonymous search. */
  bindDN?: string;
  /** Its password (never logged); required with `bindDN` and never empty (an empty password is an anonymous bind). */
  bindPassword?: string;
  /** Where users are searched (subtree). Required. */
  baseDN: string;
  /**
   * Filter finding the one entry of a login name; `${account}` is replaced by the name escaped
   * per RFC 4515 (docker_auth's placeholder, so its configurations carry over). Defaults to
   * `(uid=${account})`.
   */
  userFilter?: string;
  /**
   * Attribute of the user entry listing its groups, e.g. `memberOf` (OpenLDAP's memberof
   * overlay, Active Directory). Values that are DNs become the name in their first RDN
   * (`cn=team-a,ou=groups,…` → `team-a`); other values are kept as they are. Defaults to none.
   */
  groupAttribute?: string;
  /** Find groups with a search instead of (or besides) `groupAttribute`. Defaults to none. */
  groupSearch?: LdapGroupSearch;
  /** Label the group names are given under (`${labels:groups}` in the ACL). Defaults to `groups`. */
  groupsLabel?: string;
  /** Further labels: label name → attribute of the user entry whose values it takes. Defaults to none. */
  labelAttributes?: Record<string, string>;
  /**
   * Attribute whose (first) value becomes the identity's subject, e.g. `uid`, so the directory's
   * spelling wins over what was typed (`Alice` → `alice`). Defaults to the login name as typed.
   */
  accountAttribute?: string;
  /** TLS settings. Defaults to none (plain `ldap://` sends passwords in the clear: use TLS beyond localhost). */
  tls?: LdapTlsOptions;
  /**
   * Milliseconds one login may take against the directory (search, group search and bind); past
   * it the client gets 503 with Retry-After and the connection is dropped. Defaults to 5000.
   */
  timeoutMs?: number;
  /** Milliseconds to open a TCP connection. Defaults to 3000 (or `timeoutMs` if lower). */
  connectTimeoutMs?: number;
  /** Seconds in `Retry-After` when the directory is unreachable. Defaults to 5. */
  retryAfter?: number;
  /**
   * Called with problems that refuse a login without being the client's fault (a filter that
   * matched several entries). Defaults to `process.emitWarning`.
   */
  onError?: (error: Error) => void;
}

/** Options after defaults and validation. */
export interface ResolvedLdapOptions {
  url: URL;
  secure: boolean;
  bind?: { dn: string; password: string };
  baseDN: string;
  userFilter: string;
  groupAttribute?: string;
  groupSearch?: Required<LdapGroupSearch>;
  groupsLabel: string;
  labelAttributes: ReadonlyArray<[string, string]>;
  accountAttribute?: string;
  ca?: Array<string | Buffer>;
  startTLS: boolean;
  timeoutMs: number;
  connectTimeoutMs: number;
  retryAfter: number;
  onError: (error: Error) => void;
}


function attribute(value: unknown, name: string): string {
  // RFC 4512 §2.5: an attribute description is a name (letters, digits, hyphens) or an OID.
  if (typeof value !== 'string' || !/^([A-Za-z][A-Za-z0-9-]*|[0-9]+(\.[0-9]+)+)$/.test(value)) {
    throw new TypeError(`"${name}" must be an LDAP attribute name such as "memberOf"`);
  }
  return value;
}


/**
 * Validates {@link LdapAuthenticatorOptions} once, at construction.
 *
 * @throws {TypeError} naming the option.
 */
export function resolveLdapOptions(options: LdapAuthenticatorOptions): ResolvedLdapOptions {
  if (typeof options !== 'object' || options === null) throw new TypeError('ldapAuthenticator options must be an object');
  const url = ldapUrl(options.url, 'url');
  const secure = url.protocol === 'ldaps:';
  const tls = options.tls ?? {};
  if (typeof tls !== 'object' || tls === null) throw new TypeError('"tls" must be an object');
  const startTLS = booleanOption(tls.startTLS ?? false, 'tls.startTLS');
  if (startTLS && secure) throw new TypeError('"tls.startTLS" is for ldap:// URLs; ldaps:// is TLS already');
  let ca: Array<string | Buffer> | undefined;
  if (tls.ca !== undefined) {
    ca = (Array.isArray(tls.ca) ? [...tls.ca] : [tls.ca]) as Array<string | Buffer>;
    if (ca.length === 0 || ca.some((c) => typeof c !== 'string' && !Buffer.isBuffer(c))) throw new TypeError('"tls.ca" must be PEM text or a Buffer, or a list of them');
  }
  let bind: ResolvedLdapOptions['bind'];
  if (options.bindDN !== undefined || options.bindPassword !== undefined) {
    const dn = nonBlankString(options.bindDN, 'bindDN');
    if (typeof options.bindPassword !== 'string' || options.bindPassword.length === 0) {
      throw new TypeError('"bindPassword" must be a non-empty string with "bindDN" (an empty password would be an anonymous bind)');
    }
    bind = { dn, password: options.bindPassword };
  }
  const timeoutMs = integerOption(options.timeoutMs ?? 5000, 'timeoutMs', 1);
  const labelAttributes: Array<[string, string]> = [];
  if (options.labelAttributes !== undefined) {
    if (typeof options.labelAttributes !== 'object' || options.labelAttributes === null) throw new TypeError('"labelAttributes" must be an object of label → attribute');
    for (const [label, attr] of Object.entries(options.labelAttributes)) {
      labelAttributes.push([nonBlankString(label, 'labelAttributes key'), attribute(attr, `labelAttributes.${label}`)]);
    }
  }
  const groupsLabel = nonBlankString(options.groupsLabel ?? 'groups', 'groupsLabel');
  if (labelAttributes.some(([label]) => label === groupsLabel) && (options.groupAttribute || options.groupSearch)) {
    throw new TypeError(`"labelAttributes.${groupsLabel}" would hide the group label; choose another name or "groupsLabel"`);
  }
  const onError = functionOption(options.onError ?? ((error: Error) => process.emitWarning(error)), 'onError');
  const resolved: ResolvedLdapOptions = {
    url,
    secure,
    baseDN: nonBlankString(options.baseDN, 'baseDN'),
    userFilter: checkFilterTemplate(options.userFilter ?? '(uid=${account})', 'userFilter', ['account'], ['account']),
    groupsLabel,
    labelAttributes,
    startTLS,
    timeoutMs,
    connectTimeoutMs: Math.min(integerOption(options.connectTimeoutMs ?? 3000, 'connectTimeoutMs', 1), timeoutMs),
    retryAfter: integerOption(options.retryAfter ?? 5, 'retryAfter', 1),
    onError,
  };
  if (bind) resolved.bind = bind;
  if (ca) resolved.ca = ca;
  if (options.groupAttribute !== undefined) resolved.groupAttribute = attribute(options.groupAttribute, 'groupAttribute');
  if (options.accountAttribute !== undefined) resolved.accountAttribute = attribute(options.accountAttribute, 'accountAttribute');
  if (options.groupSearch !== undefined) {
    const search = options.groupSearch;
    if (typeof search !== 'object' || search === null) throw new TypeError('"groupSearch" must be an object with "baseDN"');
    resolved.groupSearch = {
      baseDN: nonBlankString(search.baseDN, 'groupSearch.baseDN'),
      filter: checkFilterTemplate(search.filter ?? '(|(member=${dn})(uniqueMember=${dn}))', 'groupSearch.filter', ['dn', 'account'], []),
      nameAttribute: attribute(search.nameAttribute ?? 'cn', 'groupSearch.nameAttribute'),
    };
  }
  return resolved;
}
