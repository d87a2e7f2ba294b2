import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { parseArgs } from 'node:util';

export interface DemoOptions {
  host: string;
  port: number;
  engineSocket: string;
  runtime: 'sandbox' | 'process' | 'docker';
  dockerSocket: string;
  key?: string;
  cert?: string;
  users: string;
  service: string;
  issuer: string;
  acl?: string;
  apiRange: { min: string; max: string };
  redis?: string;
  /** Startup nodes of a Redis Cluster (`host:port`), from --redis-cluster. */
  redisCluster?: string[];
  stateDir: string;
  /** pino level of the JSON log lines on stdout, from --log-level. */
  logLevel: LogLevel;
  /**
   * Accounts that administer the engine over TCP, from --engine-admins; every other signed-in
   * account is a tenant. The Unix socket is the local administrator's.
   */
  engineAdmins: string[];
  /** Registries the sandbox runtime pulls from over plain HTTP besides 127.0.0.0/8, from --insecure-registry. */
  insecureRegistries: string[];
  /** Rootless sandbox runtime: container ids per owner's range of the user's subordinate range, from --userns-size. */
  usernsSize?: number;
  /** --ldap and its companions: log in directory users too. */
  ldap?: DemoLdapOptions;
  /** --oidc-issuer and its companions: log in CI jobs with ID tokens. */
  oidc?: DemoOidcOptions;
}

export interface DemoLdapOptions {
  url: string;
  bindDN?: string;
  bindPasswordFile?: string;
  baseDN: string;
  userFilter: string;
  groupAttribute: string;
  caFile?: string;
  startTLS: boolean;
}

export interface DemoOidcOptions {
  issuers: string[];
  audience: string;
  claimsFile?: string;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const help = `Usage: npm run demo -- [options]

A host app composed from dockgate's public exports: the registry token service, registry-style
routes behind requireBearer, and the Docker Engine API on a Unix socket and on TCP (bearer-protected).

Options:
  --host HOST            address to listen on (default 127.0.0.1)
  --port PORT            TCP port for the token service, /v2/ and /engine (default 5001)
  --engine-socket PATH   Unix socket of the engine API (default ${defaultEngineSocket()}; not root:
                         $XDG_RUNTIME_DIR/dockgate-engine.sock when XDG_RUNTIME_DIR is set)
  --runtime KIND         sandbox (busybox/alpine containers isolated with bubblewrap), process (UNCONFINED:
                         commands run on this host as this user) or docker (default sandbox)
  --docker-socket PATH   engine socket for --runtime docker (default /var/run/docker.sock)
  --key FILE             PEM signing key (default: a development key made on first start)
  --cert FILE            PEM certificate of --key (default: the development certificate)
  --users FILE           htpasswd file (default demo/users.htpasswd: alice/wonderland, bob/builder)
  --service NAME         registry service name, the tokens' aud (default registry.local)
  --issuer NAME          the tokens' iss (default dockgate-demo)
  --acl FILE             JSON access rules replacing the defaults
  --api-range MIN-MAX    engine API versions served (default 1.12-1.28)
  --engine-admins NAME[,NAME…]
                         accounts that administer the engine over TCP (see and act on every container,
                         host binds, --privileged, shared image names); every other signed-in account
                         is a tenant that sees only its own containers. The Unix socket is always the
                         local administrator's, protected by its file mode (default: none)
  --redis URL            keep refresh tokens and failed-login counts in Redis instead of memory
  --redis-cluster HOST:PORT[,HOST:PORT…]
                         the same in a Redis Cluster (any reachable nodes; the rest are discovered)
  --state-dir DIR        where the development key is kept (default demo/.dockgate, git-ignored)
  --log-level LEVEL      JSON log lines (pino) on stdout: fatal, error, warn, info, debug, trace or
                         silent (default info); Prometheus metrics are served at /metrics
  --state-dir DIR        where the development key is kept, and the sandbox runtime's images, containers
                         and their logs (under DIR/engine; they survive a restart) (default demo/.dockgate,
                         git-ignored)
  --insecure-registry HOST[:PORT]
                         pull from this registry over plain HTTP (sandbox runtime; repeatable; registries
                         on 127.0.0.0/8 and localhost always are)
  --userns-size N        run as an ordinary user: cut its /etc/subuid range into owners' ranges of N
                         container ids (2-65536), one per tenant (default: the whole range, containers
                         without an owner only)
  --ldap URL             also log in users of an LDAP directory (ldap://HOST[:PORT] or ldaps://…),
                         tried after --oidc-issuer and before --users
  --ldap-base-dn DN      where users are searched (required with --ldap)
  --ldap-bind-dn DN      service account that searches (default: anonymous search)
  --ldap-bind-password-file FILE
                         file holding that account's password (required with --ldap-bind-dn)
  --ldap-user-filter F   filter finding a user; \${account} is the escaped login name
                         (default (uid=\${account}))
  --ldap-group-attribute ATTR
                         attribute of the user entry listing its groups, the "groups" label
                         (default memberOf)
  --ldap-ca FILE         PEM CA the directory's certificate must chain to (ldaps:// or --ldap-starttls)
  --ldap-starttls        upgrade ldap:// with StartTLS before binding
  --oidc-issuer URL      also log in CI jobs: docker login -u oidc with an ID token of this issuer
                         (repeat for several issuers)
  --oidc-audience AUD    the aud the ID tokens must carry (default: the --service name)
  --oidc-claims FILE     JSON mapping of claims: {"account":"CLAIM","labels":{"LABEL":"CLAIM",…}}
                         (default: account from sub, no labels)
  --help                 this text
`;

export class DemoUsageError extends Error {}

/**
 * The engine socket's default: the temporary directory for root (as always), and the user's own
 * runtime directory (`$XDG_RUNTIME_DIR`, an absolute path) for anyone else, where it exists.
 */
export function defaultEngineSocket(env: NodeJS.ProcessEnv = process.env, uid = process.geteuid?.() ?? 0): string {
  const runtimeDir = env.XDG_RUNTIME_DIR;
  if (uid !== 0 && runtimeDir && isAbsolute(runtimeDir)) return join(runtimeDir, 'dockgate-engine.sock');
  return join(tmpdir(), 'dockgate-engine.sock');
}

/** Parses the demo's flags; a bad one is a DemoUsageError naming it. */
export function parseDemoOptions(argv: string[], demoDir: string): DemoOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '5001' },
      'engine-socket': { type: 'string', default: defaultEngineSocket() },
      runtime: { type: 'string', default: 'sandbox' },
      'docker-socket': { type: 'string', default: '/var/run/docker.sock' },
      key: { type: 'string' },
      cert: { type: 'string' },
      users: { type: 'string', default: join(demoDir, 'users.htpasswd') },
      service: { type: 'string', default: 'registry.local' },
      issuer: { type: 'string', default: 'dockgate-demo' },
      acl: { type: 'string' },
      'api-range': { type: 'string', default: '1.12-1.28' },
      'engine-admins': { type: 'string', default: '' },
      redis: { type: 'string' },
      'redis-cluster': { type: 'string' },
      'state-dir': { type: 'string', default: join(demoDir, '.dockgate') },
      'log-level': { type: 'string', default: 'info' },
      'insecure-registry': { type: 'string', multiple: true, default: [] },
      'userns-size': { type: 'string' },
      ldap: { type: 'string' },
      'ldap-base-dn': { type: 'string' },
      'ldap-bind-dn': { type: 'string' },
      'ldap-bind-password-file': { type: 'string' },
      'ldap-user-filter': { type: 'string', default: '(uid=${account})' },
      'ldap-group-attribute': { type: 'string', default: 'memberOf' },
      'ldap-ca': { type: 'string' },
      'ldap-starttls': { type: 'boolean', default: false },
      'oidc-issuer': { type: 'string', multiple: true },
      'oidc-audience': { type: 'string' },
      'oidc-claims': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return 'help';
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new DemoUsageError('--port must be a port number');
  if (values.runtime !== 'sandbox' && values.runtime !== 'process' && values.runtime !== 'docker') throw new DemoUsageError('--runtime must be sandbox, process or docker');
  const range = /^(\d+\.\d+)-(\d+\.\d+)$/.exec(values['api-range']);
  if (!range) throw new DemoUsageError('--api-range must look like 1.12-1.28');
  if ((values.key === undefined) !== (values.cert === undefined)) throw new DemoUsageError('--key and --cert go together');
  if (values.redis !== undefined && values['redis-cluster'] !== undefined) throw new DemoUsageError('--redis and --redis-cluster exclude each other');
  const redisCluster = values['redis-cluster']?.split(',').map((node) => node.trim());
  if (redisCluster && (redisCluster.length === 0 || redisCluster.some((node) => !/^(\[[^\]]+\]|[^:[\]]+):\d{1,5}$/.test(node)))) {
    throw new DemoUsageError('--redis-cluster must be HOST:PORT[,HOST:PORT…]');
  }
  const logLevel = values['log-level'] as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) throw new DemoUsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
  const engineAdmins = values['engine-admins'].split(',').map((name) => name.trim()).filter((name) => name !== '');
  if (engineAdmins.some((name) => !/^[^\s,:]{1,255}$/.test(name))) throw new DemoUsageError('--engine-admins must be NAME[,NAME…] (account names)');
  const insecureRegistries = values['insecure-registry'];
  if (insecureRegistries.some((h) => !/^[A-Za-z0-9.-]+(:\d{1,5})?$/.test(h))) throw new DemoUsageError('--insecure-registry must be HOST[:PORT]');
  const usernsSize = values['userns-size'] === undefined ? undefined : Number(values['userns-size']);
  if (usernsSize !== undefined && (!Number.isSafeInteger(usernsSize) || usernsSize < 2 || usernsSize > 65536)) throw new DemoUsageError('--userns-size must be an integer from 2 to 65536');
  let ldap: DemoLdapOptions | undefined;
  if (values.ldap !== undefined) {
    if (!values['ldap-base-dn']) throw new DemoUsageError('--ldap needs --ldap-base-dn');
    if ((values['ldap-bind-dn'] === undefined) !== (values['ldap-bind-password-file'] === undefined)) {
      throw new DemoUsageError('--ldap-bind-dn and --ldap-bind-password-file go together');
    }
    ldap = {
      url: values.ldap,
      baseDN: values['ldap-base-dn'],
      userFilter: values['ldap-user-filter'],
      groupAttribute: values['ldap-group-attribute'],
      startTLS: values['ldap-starttls'],
      ...(values['ldap-bind-dn'] ? { bindDN: values['ldap-bind-dn'] } : {}),
      ...(values['ldap-bind-password-file'] ? { bindPasswordFile: values['ldap-bind-password-file'] } : {}),
      ...(values['ldap-ca'] ? { caFile: values['ldap-ca'] } : {}),
    };
  } else {
    const stray = ['ldap-base-dn', 'ldap-bind-dn', 'ldap-bind-password-file', 'ldap-ca'].find((flag) => values[flag as 'ldap-ca'] !== undefined);
    if (stray || values['ldap-starttls']) throw new DemoUsageError(`--${stray ?? 'ldap-starttls'} needs --ldap URL`);
  }
  let oidc: DemoOidcOptions | undefined;
  if (values['oidc-issuer'] !== undefined) {
    oidc = {
      issuers: values['oidc-issuer'],
      audience: values['oidc-audience'] ?? values.service,
      ...(values['oidc-claims'] ? { claimsFile: values['oidc-claims'] } : {}),
    };
  } else if (values['oidc-audience'] !== undefined || values['oidc-claims'] !== undefined) {
    throw new DemoUsageError(`--${values['oidc-audience'] !== undefined ? 'oidc-audience' : 'oidc-claims'} needs --oidc-issuer URL`);
  }
  return {
    logLevel,
    ...(ldap ? { ldap } : {}),
    ...(oidc ? { oidc } : {}),
    host: values.host,
    port,
    engineSocket: values['engine-socket'],
    runtime: values.runtime,
    dockerSocket: values['docker-socket'],
    ...(values.key ? { key: values.key } : {}),
    ...(values.cert ? { cert: values.cert } : {}),
    users: values.users,
    service: values.service,
    issuer: values.issuer,
    ...(values.acl ? { acl: values.acl } : {}),
    apiRange: { min: range[1] as string, max: range[2] as string },
    ...(values.redis ? { redis: values.redis } : {}),
    ...(redisCluster ? { redisCluster } : {}),
    stateDir: values['state-dir'],
    engineAdmins,
    insecureRegistries,
    ...(usernsSize !== undefined ? { usernsSize } : {}),
  };
}
