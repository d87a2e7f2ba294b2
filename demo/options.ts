import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const help = `Usage: npm run demo -- [options]

A host app composed from dockgate's public exports: the registry token service, registry-style
routes behind requireBearer, and the Docker Engine API on a Unix socket and on TCP (bearer-protected).

Options:
  --host HOST            address to listen on (default 127.0.0.1)
  --port PORT            TCP port for the token service, /v2/ and /engine (default 5001)
  --engine-socket PATH   Unix socket of the engine API (default ${join(tmpdir(), 'dockgate-engine.sock')})
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
  --redis URL            keep refresh tokens and failed-login counts in Redis instead of memory
  --redis-cluster HOST:PORT[,HOST:PORT…]
                         the same in a Redis Cluster (any reachable nodes; the rest are discovered)
  --state-dir DIR        where the development key is kept (default demo/.dockgate, git-ignored)
  --log-level LEVEL      JSON log lines (pino) on stdout: fatal, error, warn, info, debug, trace or
                         silent (default info); Prometheus metrics are served at /metrics
  --help                 this text
`;

export class DemoUsageError extends Error {}

/** Parses the demo's flags; a bad one is a DemoUsageError naming it. */
export function parseDemoOptions(argv: string[], demoDir: string): DemoOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '5001' },
      'engine-socket': { type: 'string', default: join(tmpdir(), 'dockgate-engine.sock') },
      runtime: { type: 'string', default: 'sandbox' },
      'docker-socket': { type: 'string', default: '/var/run/docker.sock' },
      key: { type: 'string' },
      cert: { type: 'string' },
      users: { type: 'string', default: join(demoDir, 'users.htpasswd') },
      service: { type: 'string', default: 'registry.local' },
      issuer: { type: 'string', default: 'dockgate-demo' },
      acl: { type: 'string' },
      'api-range': { type: 'string', default: '1.12-1.28' },
      redis: { type: 'string' },
      'redis-cluster': { type: 'string' },
      'state-dir': { type: 'string', default: join(demoDir, '.dockgate') },
      'log-level': { type: 'string', default: 'info' },
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
  return {
    logLevel,
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
  };
}
